//! Integer hooks: comparisons report both operands (64-bit values) as an
//! integer comparison, divisions their divisor; an Integer compared with a
//! Float goes to the Float feedback.

use super::{builtin, Hook, HookModule, Operator};
use crate::coverage::hook;
use crate::feedback::compare_sites;
use crate::feedback::numbers;
use crate::rb::method::Function;
use crate::rb::value::{self, boolean, fixnum_value, integer_bits, ordering, MethodCall};
use rb_sys::VALUE;

pub const HOOKS: HookModule = HookModule {
    group: "integer",
    class: c"Integer",
    module: "IntegerHooks",
    hooks: &[
        compare::<Eq>(),
        compare::<Ne>(),
        compare::<Lt>(),
        compare::<Le>(),
        compare::<Gt>(),
        compare::<Ge>(),
        compare::<Cmp>(),
        compare::<Eql>(),
        compare::<Eqq>(),
        Hook::new(
            &[c"/", c"%", c"div", c"divmod", c"modulo"],
            Function::One(divide),
        ),
        Hook::new(&[c"between?"], Function::Two(between)),
    ],
};

operators! { i64;
    Eq c"==" IntegerEq |a, b| boolean(a == b);
    Ne c"!=" IntegerNe |a, b| boolean(a != b);
    Lt c"<" IntegerLt |a, b| boolean(a < b);
    Le c"<=" IntegerLe |a, b| boolean(a <= b);
    Gt c">" IntegerGt |a, b| boolean(a > b);
    Ge c">=" IntegerGe |a, b| boolean(a >= b);
    Cmp c"<=>" IntegerCmp |a, b| ordering(a.cmp(&b));
    Eql c"eql?" IntegerEql |a, b| boolean(a == b);
    Eqq c"===" IntegerEqq |a, b| boolean(a == b);
}

const fn compare<O: Operator<Operand = i64>>() -> Hook {
    Hook::new(O::NAMES, Function::One(compare_hook::<O>)).fast(O::FAST_PATH)
}

unsafe extern "C" fn compare_hook<O: Operator<Operand = i64>>(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if let (Some(a), Some(b)) = (integer_bits(this), integer_bits(other)) {
        if let Some(site) = compare_sites::caller(&call) {
            hook::reach_compare_site(site);
            compare_sites::cmp8(site, a, b);
            numbers::integers(site, a, b);
        }
        if let (Some(a), Some(b)) = (fixnum_value(this), fixnum_value(other)) {
            if builtin(O::FAST_PATH) {
                // SAFETY: any two Fixnums.
                return unsafe { O::builtin(a, b) };
            }
        }
    } else if let Some(b) = value::float_value(other) {
        super::number::integer_with_float(&call, this, b);
    }
    call.call_super()
}

unsafe extern "C" fn divide(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if let (Some(_), Some(divisor)) = (integer_bits(this), integer_bits(other)) {
        if let Some(site) = compare_sites::caller(&call) {
            hook::reach_compare_site(site);
            compare_sites::div8(site, divisor);
        }
    }
    call.call_super()
}

unsafe extern "C" fn between(this: VALUE, min: VALUE, max: VALUE) -> VALUE {
    let args = [min, max];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if let Some(value) = integer_bits(this) {
        if let Some(site) = compare_sites::caller(&call) {
            hook::reach_compare_site(site);
            for bound in args.into_iter().filter_map(integer_bits) {
                compare_sites::cmp8(site, value, bound);
            }
        }
    }
    call.call_super()
}

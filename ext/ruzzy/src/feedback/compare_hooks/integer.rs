//! Integer hooks: comparisons report both operands (64-bit values) as an
//! integer comparison, divisions their divisor; an Integer compared with a
//! Float goes to the Float feedback.
//!
//! Fast paths: comparisons of two Integers (Bignums ordered by Ruby's own
//! `rb_big_cmp`: a 128-bit address compared is no `super` call), and `/`, `%`, `div` and
//! `modulo` of two Fixnums (floored, as Ruby's; a zero divisor or a
//! quotient out of the Fixnum range goes to `super`).

use super::{builtin, builtin_at, FastPath, Hook, HookModule, Operator};
use crate::feedback::compare_sites;
use crate::feedback::numbers;
use crate::rb::method::Function;
use crate::rb::value::{self, boolean, fixnum, fixnum_value, integer_bits, ordering, MethodCall};
use rb_sys::VALUE;
use std::ffi::CStr;

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
        division::<{ FastPath::IntegerDiv as usize }, false>(&[c"/"]),
        division::<{ FastPath::IntegerMod as usize }, true>(&[c"%"]),
        division::<{ FastPath::IntegerDivInt as usize }, false>(&[c"div"]),
        division::<{ FastPath::IntegerModulo as usize }, true>(&[c"modulo"]),
        Hook::new(&[c"divmod"], Function::One(divide)),
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
            compare_sites::reach(site);
            // Numbers read from text are proposed with the pair's first
            // report in an epoch, as the pair itself.
            if compare_sites::cmp8(site, a, b) {
                numbers::integers(site, a, b);
            }
        }
    } else if let Some(b) = value::float_value(other) {
        super::number::integer_with_float(&call, this, b);
        return call.call_super();
    }
    if builtin(O::FAST_PATH) {
        if let (Some(a), Some(b)) = (fixnum_value(this), fixnum_value(other)) {
            // SAFETY: any two Fixnums.
            return unsafe { O::builtin(a, b) };
        }
        if let Some(order) = value::integer_order(this, other) {
            // SAFETY: two Fixnums that order as the operands do (every
            // operator hooked here depends on the order alone).
            return unsafe { O::builtin(order, 0) };
        }
    }
    call.call_super()
}

unsafe extern "C" fn divide(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    report_divisor(&call, this, other);
    call.call_super()
}

/// The hook of `/` or `div` (`MODULO` false), `%` or `modulo` (true),
/// whose fast path is the [`FastPath`] numbered `FAST`.
const fn division<const FAST: usize, const MODULO: bool>(name: &'static [&'static CStr]) -> Hook {
    Hook::new(name, Function::One(divide_fast::<FAST, MODULO>)).fast(FastPath::ALL[FAST])
}

unsafe extern "C" fn divide_fast<const FAST: usize, const MODULO: bool>(
    this: VALUE,
    other: VALUE,
) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    report_divisor(&call, this, other);
    if let (Some(a), Some(b)) = (fixnum_value(this), fixnum_value(other)) {
        if builtin_at(FAST) {
            if let Some((quotient, remainder)) = floored_division(a, b) {
                if let Some(result) = fixnum(if MODULO { remainder } else { quotient }) {
                    return result;
                }
            }
        }
    }
    call.call_super()
}

/// Ruby's Integer division of two Fixnums: the quotient rounded towards
/// negative infinity and the remainder with the divisor's sign; None for a
/// zero divisor (Ruby raises).
fn floored_division(a: i64, b: i64) -> Option<(i64, i64)> {
    // Fixnums lie within ±2^62, so neither operation overflows.
    let (mut quotient, mut remainder) = (a.checked_div(b)?, a.checked_rem(b)?);
    if remainder != 0 && (remainder < 0) != (b < 0) {
        quotient -= 1;
        remainder += b;
    }
    Some((quotient, remainder))
}

/// Reports the divisor of an Integer division.
fn report_divisor(call: &MethodCall, this: VALUE, other: VALUE) {
    if let (Some(_), Some(divisor)) = (integer_bits(this), integer_bits(other)) {
        if let Some(site) = compare_sites::caller(call) {
            compare_sites::reach(site);
            compare_sites::div8(site, divisor);
        }
    }
}

unsafe extern "C" fn between(this: VALUE, min: VALUE, max: VALUE) -> VALUE {
    let args = [min, max];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if let Some(value) = integer_bits(this) {
        if let Some(site) = compare_sites::caller(&call) {
            compare_sites::reach(site);
            for bound in args.into_iter().filter_map(integer_bits) {
                compare_sites::cmp8(site, value, bound);
            }
        }
    }
    call.call_super()
}

#[cfg(test)]
mod tests {
    use super::floored_division;

    #[test]
    fn division_floors_like_ruby() {
        // Ruby: 7 / 2 = 3, -7 / 2 = -4, 7 / -2 = -4, -7 / -2 = 3, and the
        // remainders 1, 1, -1, -1.
        assert_eq!(floored_division(7, 2), Some((3, 1)));
        assert_eq!(floored_division(-7, 2), Some((-4, 1)));
        assert_eq!(floored_division(7, -2), Some((-4, -1)));
        assert_eq!(floored_division(-7, -2), Some((3, -1)));
        assert_eq!(floored_division(6, -3), Some((-2, 0)));
        assert_eq!(floored_division(1, 0), None);
        assert_eq!(floored_division(-(1 << 62), -1), Some((1 << 62, 0)));
    }
}

//! Symbol hooks: `==`, `!=` and `===` between two different Symbols report
//! their names as a byte comparison.
//!
//! Fast path: Ruby's own `==` and `===` of a Symbol are identity (`!=` is
//! BasicObject's, the negation of `==`), whatever the other operand.

use super::{builtin, Hook, HookModule, Operator};
use crate::feedback::compare_sites;
use crate::rb::method::Function;
use crate::rb::value::{boolean, is_symbol, MethodCall};
use rb_sys::VALUE;

pub const HOOKS: HookModule = HookModule {
    group: "symbol",
    class: c"Symbol",
    module: "SymbolHooks",
    hooks: &[compare::<Eq>(), compare::<Ne>(), compare::<Eqq>()],
};

operators! { VALUE;
    Eq c"==" SymbolEq |a, b| boolean(a == b);
    Ne c"!=" SymbolNe |a, b| boolean(a != b);
    Eqq c"===" SymbolEqq |a, b| boolean(a == b);
}

const fn compare<O: Operator<Operand = VALUE>>() -> Hook {
    Hook::new(O::NAMES, Function::One(compare_hook::<O>)).fast(O::FAST_PATH)
}

unsafe extern "C" fn compare_hook<O: Operator<Operand = VALUE>>(
    this: VALUE,
    other: VALUE,
) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if this != other && is_symbol(this) && is_symbol(other) {
        if let Some(site) = compare_sites::caller(&call) {
            compare_sites::reach(site);
            // A Symbol is its name: the same two Symbols compared again
            // need not have their names read.
            if compare_sites::fresh_values(site, this, other) {
                if let (Some(a), Some(b)) = (call.symbol_name(this), call.symbol_name(other)) {
                    compare_sites::bytes(site, a, b);
                }
            }
        }
    }
    if builtin(O::FAST_PATH) {
        // SAFETY: identity of any two values.
        return unsafe { O::builtin(this, other) };
    }
    call.call_super()
}

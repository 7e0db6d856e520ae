//! Symbol hooks: `==`, `!=` and `===` between two different Symbols report
//! their names as a byte comparison.

use super::{Hook, HookModule};
use crate::coverage::hook;
use crate::feedback::compare_sites;
use crate::rb::method::Function;
use crate::rb::value::MethodCall;
use rb_sys::VALUE;

pub const HOOKS: HookModule = HookModule {
    group: "symbol",
    class: c"Symbol",
    module: "SymbolHooks",
    hooks: &[Hook::new(&[c"==", c"!=", c"==="], Function::One(compare))],
};

unsafe extern "C" fn compare(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if this != other {
        if let (Some(a), Some(b)) = (call.symbol_name(this), call.symbol_name(other)) {
            if let Some(site) = compare_sites::caller(&call) {
                hook::reach_compare_site(site.location());
                compare_sites::bytes(site, a, b);
            }
        }
    }
    call.call_super()
}

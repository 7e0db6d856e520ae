//! Hash hooks: a lookup whose key (an Integer, Symbol or plain String) is
//! missing reports the key against (some of) the keys the Hash has.

use super::{Hook, HookModule};
use crate::coverage::hook;
use crate::feedback::compare_sites;
use crate::rb::method::Function;
use crate::rb::value::{self, integer_bits, Frame, MethodCall};
use rb_sys::VALUE;
use std::ffi::c_int;

pub const HOOKS: HookModule = HookModule {
    group: "hash",
    class: c"Hash",
    module: "HashHooks",
    hooks: &[Hook::new(
        &[
            c"[]",
            c"fetch",
            c"key?",
            c"has_key?",
            c"include?",
            c"member?",
            c"dig",
        ],
        Function::Var(lookup),
    )],
};

/// How many keys a missed lookup is compared against.
const KEYS_REPORTED: usize = 64;

unsafe extern "C" fn lookup(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    if let Some(&key) = call.args().first() {
        report_miss(&call, this, key);
    }
    call.call_super()
}

/// Reports a key that is not in `hash` (a Hash: the hooks are only
/// prepended to Hash) against its keys. Only built-in key kinds whose
/// lookup runs no Ruby code are handled.
fn report_miss(frame: &Frame, hash: VALUE, key: VALUE) {
    let simple = value::is_fixnum(key)
        || value::is_static_symbol(key)
        || !value::is_special_const(key) && value::class_of(key) == value::string_class();
    if !simple {
        return;
    }
    let Some(site) = compare_sites::caller(frame) else {
        return;
    };
    hook::reach_compare_site(site);
    if value::hash_has_key(hash, key) {
        return;
    }
    let mut reported = 0;
    value::hash_each_key(hash, |candidate| {
        if let (Some(a), Some(b)) = (integer_bits(key), integer_bits(candidate)) {
            compare_sites::cmp8(site, a, b);
        } else if let (Some(a), Some(b)) = (frame.text_bytes(key), frame.text_bytes(candidate)) {
            compare_sites::bytes(site, a, b);
        }
        reported += 1;
        reported < KEYS_REPORTED
    });
}

//! String hooks: equality and ordering report a byte comparison, prefix and
//! suffix tests compare the matching end of the String, substring searches
//! report the needle.

use super::{builtin, Hook, HookModule, Operator};
use crate::feedback::compare_sites;
use crate::rb::method::Function;
use crate::rb::value::{boolean, ordering, strings_equal, strings_order, MethodCall, QFALSE};
use rb_sys::VALUE;
use std::ffi::c_int;

pub const HOOKS: HookModule = HookModule {
    group: "string",
    class: c"String",
    module: "StringHooks",
    hooks: &[
        compare::<Eq>(),
        compare::<Ne>(),
        compare::<Eql>(),
        compare::<Eqq>(),
        compare::<Cmp>(),
        Hook::new(&[c"start_with?"], Function::Var(start_with)),
        Hook::new(&[c"end_with?"], Function::Var(end_with)),
        Hook::new(&[c"include?"], Function::One(include)),
        Hook::new(&[c"index"], Function::Var(index)),
    ],
};

operators! { VALUE;
    Eq c"==" StringEq |a, b| boolean(strings_equal(a, b));
    Ne c"!=" StringNe |a, b| boolean(!strings_equal(a, b));
    Eql c"eql?" StringEql |a, b| boolean(strings_equal(a, b));
    Eqq c"===" StringEqq |a, b| boolean(strings_equal(a, b));
    Cmp c"<=>" StringCmp |a, b| ordering(strings_order(a, b));
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
    if let (Some(a), Some(b)) = (call.string_bytes(this), call.string_bytes(other)) {
        if let Some(site) = compare_sites::caller(&call) {
            compare_sites::reach(site);
            compare_sites::bytes(site, a, b);
        }
        if builtin(O::FAST_PATH) {
            // SAFETY: both are Strings (their bytes were just read).
            return unsafe { O::builtin(this, other) };
        }
    }
    call.call_super()
}

unsafe extern "C" fn start_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    if let (Some(text), Some(site)) = (call.string_bytes(this), compare_sites::caller(&call)) {
        compare_sites::reach(site);
        for prefix in call.args().iter().filter_map(|&arg| call.string_bytes(arg)) {
            compare_sites::bytes(site, &text[..text.len().min(prefix.len())], prefix);
        }
    }
    let result = call.call_super();
    if result == QFALSE {
        for &pattern in call.args() {
            super::regexp::start_with_failed(&call, this, pattern);
        }
    }
    result
}

unsafe extern "C" fn end_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    if let (Some(text), Some(site)) = (call.string_bytes(this), compare_sites::caller(&call)) {
        compare_sites::reach(site);
        for suffix in call.args().iter().filter_map(|&arg| call.string_bytes(arg)) {
            let end = &text[text.len().saturating_sub(suffix.len())..];
            compare_sites::bytes(site, end, suffix);
        }
    }
    call.call_super()
}

unsafe extern "C" fn include(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    search(&call, this, other);
    call.call_super()
}

unsafe extern "C" fn index(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let needle = call.first();
    if call.string_bytes(needle).is_none() {
        // A Regexp (or an invalid argument super rejects).
        return super::regexp::string_pattern_call::<{ super::regexp::FAILS_WHEN_FALSY }, true>(
            call, this,
        );
    }
    search(&call, this, needle);
    call.call_super()
}

/// Reports a search for the String `needle` in the String `text`.
fn search(call: &MethodCall, text: VALUE, needle: VALUE) {
    if let (Some(text), Some(needle)) = (call.string_bytes(text), call.string_bytes(needle)) {
        if let Some(site) = compare_sites::caller(call) {
            compare_sites::reach(site);
            compare_sites::substring(site, text, needle);
        }
    }
}

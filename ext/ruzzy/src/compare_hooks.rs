//! Ruby methods that report comparisons to libFuzzer, then defer to the
//! original method with `super`.
//!
//! `Ruzzy::CompareHooks::{Integer,String,Symbol,Hash}Hooks` are defined at
//! `require` time but only prepended to the core classes when fuzzing
//! starts (`Ruzzy::CompareHooks.install`), so a program that merely
//! requires ruzzy keeps the interpreter's fast paths for `==`, `<`, `[]`...
//!
//! Semantics never change: each hook only reads its operands' raw contents
//! (Integers that fit in 64 bits, Strings and Symbols of any class, no Ruby
//! method is called), reports them, and returns exactly what `super`
//! returns (same block, same keywords), or lets its exception propagate.
//! Refinements at the call site take precedence over the hooks, and a
//! method the program redefines still runs (it is `super` of the hook).
//!
//! Invariants: no allocation; the only Ruby call is the final `super`, so a
//! Ruby exception it raises unwinds through a frame that owns nothing
//! (no destructor is skipped).

use crate::compare_sites::{self, SiteId};
use magnus::{prelude::*, rb_sys::AsRawValue, Error, RModule};
use rb_sys::{ruby_value_type, VALUE};
use std::ffi::{c_int, CStr};

/// Arity -1 C method: (argc, argv, self).
type VarArgs = unsafe extern "C" fn(c_int, *const VALUE, VALUE) -> VALUE;
/// Arity 1 C method.
type OneArg = unsafe extern "C" fn(VALUE, VALUE) -> VALUE;
/// Arity 2 C method.
type TwoArgs = unsafe extern "C" fn(VALUE, VALUE, VALUE) -> VALUE;

/// How many keys a missed Hash lookup is compared against.
const HASH_KEYS_REPORTED: usize = 64;

/// Defines the hook modules under `Ruzzy::CompareHooks`.
pub fn define(ruzzy: RModule) -> Result<(), Error> {
    let hooks = ruzzy.define_module("CompareHooks")?;

    let integer = hooks.define_module("IntegerHooks")?;
    for name in [
        c"==", c"!=", c"<", c"<=", c">", c">=", c"<=>", c"eql?", c"===",
    ] {
        one_arg(integer, name, integer_compare);
    }
    for name in [c"/", c"%", c"div", c"divmod", c"modulo"] {
        one_arg(integer, name, integer_divide);
    }
    two_args(integer, c"between?", integer_between);

    let string = hooks.define_module("StringHooks")?;
    for name in [c"==", c"!=", c"eql?", c"===", c"<=>"] {
        one_arg(string, name, string_compare);
    }
    var_args(string, c"start_with?", string_start_with);
    var_args(string, c"end_with?", string_end_with);
    one_arg(string, c"include?", string_include);
    var_args(string, c"index", string_index);

    let symbol = hooks.define_module("SymbolHooks")?;
    for name in [c"==", c"!=", c"==="] {
        one_arg(symbol, name, symbol_compare);
    }

    let hash = hooks.define_module("HashHooks")?;
    for name in [
        c"[]",
        c"fetch",
        c"key?",
        c"has_key?",
        c"include?",
        c"member?",
        c"dig",
    ] {
        var_args(hash, name, hash_lookup);
    }
    compare_sites::init();
    Ok(())
}

fn one_arg(module: RModule, name: &CStr, function: OneArg) {
    // SAFETY: arity 1 matches the function's (self, arg) signature; Ruby
    // casts the pointer back according to the arity.
    unsafe {
        rb_sys::rb_define_method(
            module.as_raw(),
            name.as_ptr(),
            Some(std::mem::transmute::<OneArg, unsafe extern "C" fn() -> VALUE>(function)),
            1,
        );
    }
}

fn two_args(module: RModule, name: &CStr, function: TwoArgs) {
    // SAFETY: arity 2 matches (self, a, b).
    unsafe {
        rb_sys::rb_define_method(
            module.as_raw(),
            name.as_ptr(),
            Some(std::mem::transmute::<
                TwoArgs,
                unsafe extern "C" fn() -> VALUE,
            >(function)),
            2,
        );
    }
}

fn var_args(module: RModule, name: &CStr, function: VarArgs) {
    // SAFETY: arity -1 matches (argc, argv, self).
    unsafe {
        rb_sys::rb_define_method(
            module.as_raw(),
            name.as_ptr(),
            Some(std::mem::transmute::<
                VarArgs,
                unsafe extern "C" fn() -> VALUE,
            >(function)),
            -1,
        );
    }
}

/// `super` with the given arguments, the current block and keywords.
///
/// # Safety
/// Called from a hook method with its own arguments.
unsafe fn call_super(args: &[VALUE]) -> VALUE {
    // SAFETY (caller): inside a C method frame; argv has argc values.
    unsafe {
        let keywords = rb_sys::rb_keyword_given_p();
        rb_sys::rb_call_super_kw(args.len() as c_int, args.as_ptr(), keywords)
    }
}

/// The value of an Integer that fits in 64 bits (signed or unsigned).
fn integer_bits(value: VALUE) -> Option<u64> {
    if rb_sys::FIXNUM_P(value) {
        // SAFETY: a Fixnum.
        return Some(unsafe { rb_sys::FIX2LONG(value) } as u64);
    }
    // SAFETY: type checks read the object header only.
    if rb_sys::SPECIAL_CONST_P(value)
        || !unsafe { rb_sys::RB_TYPE_P(value, ruby_value_type::RUBY_T_BIGNUM) }
    {
        return None;
    }
    let mut word: u64 = 0;
    // SAFETY: packs into one 8-byte word; never raises for a Bignum; the
    // result's magnitude says whether it overflowed.
    let sign = unsafe {
        rb_sys::rb_integer_pack(
            value,
            (&mut word as *mut u64).cast(),
            1,
            8,
            0,
            (rb_sys::INTEGER_PACK_LSWORD_FIRST
                | rb_sys::INTEGER_PACK_NATIVE_BYTE_ORDER
                | rb_sys::INTEGER_PACK_2COMP) as c_int,
        )
    };
    (sign.abs() == 1).then_some(word)
}

/// The bytes of any String (subclasses included).
fn string_bytes(value: VALUE) -> Option<&'static [u8]> {
    // SAFETY: checks the type before reading; the bytes are only used
    // before any Ruby code runs.
    unsafe { crate::location::string_bytes(value) }
}

fn symbol_name(value: VALUE) -> Option<&'static [u8]> {
    // SAFETY: type check first; rb_sym2str returns the symbol's frozen
    // name without allocating.
    unsafe {
        if !rb_sys::STATIC_SYM_P(value) && !rb_sys::RB_DYNAMIC_SYM_P(value) {
            return None;
        }
        string_bytes(rb_sys::rb_sym2str(value))
    }
}

unsafe extern "C" fn integer_compare(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(a), Some(b)) = (integer_bits(this), integer_bits(other)) {
        // SAFETY: inside a C method call.
        compare_sites::cmp8(unsafe { compare_sites::caller() }, a, b);
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn integer_divide(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(_), Some(divisor)) = (integer_bits(this), integer_bits(other)) {
        // SAFETY: inside a C method call.
        compare_sites::div8(unsafe { compare_sites::caller() }, divisor);
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn integer_between(this: VALUE, min: VALUE, max: VALUE) -> VALUE {
    if let Some(value) = integer_bits(this) {
        // SAFETY: inside a C method call.
        let site = unsafe { compare_sites::caller() };
        for bound in [min, max].into_iter().filter_map(integer_bits) {
            compare_sites::cmp8(site, value, bound);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[min, max]) }
}

unsafe extern "C" fn string_compare(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(a), Some(b)) = (string_bytes(this), string_bytes(other)) {
        // SAFETY: inside a C method call.
        compare_sites::bytes(unsafe { compare_sites::caller() }, a, b);
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

/// The arguments of an arity -1 method as a slice.
///
/// # Safety
/// `argv` has `argc` values (Ruby's calling convention for arity -1).
unsafe fn arguments<'a>(argc: c_int, argv: *const VALUE) -> &'a [VALUE] {
    if argc <= 0 || argv.is_null() {
        return &[];
    }
    // SAFETY (caller).
    unsafe { std::slice::from_raw_parts(argv, argc as usize) }
}

unsafe extern "C" fn string_start_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if let Some(text) = string_bytes(this) {
        // SAFETY: inside a C method call.
        let site = unsafe { compare_sites::caller() };
        for prefix in args.iter().copied().filter_map(string_bytes) {
            compare_sites::bytes(site, &text[..text.len().min(prefix.len())], prefix);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(args) }
}

unsafe extern "C" fn string_end_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if let Some(text) = string_bytes(this) {
        // SAFETY: inside a C method call.
        let site = unsafe { compare_sites::caller() };
        for suffix in args.iter().copied().filter_map(string_bytes) {
            compare_sites::bytes(
                site,
                &text[text.len().saturating_sub(suffix.len())..],
                suffix,
            );
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(args) }
}

unsafe extern "C" fn string_include(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(text), Some(needle)) = (string_bytes(this), string_bytes(other)) {
        // SAFETY: inside a C method call.
        compare_sites::substring(unsafe { compare_sites::caller() }, text, needle);
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn string_index(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if let (Some(text), Some(needle)) = (
        string_bytes(this),
        args.first().copied().and_then(string_bytes),
    ) {
        // SAFETY: inside a C method call.
        compare_sites::substring(unsafe { compare_sites::caller() }, text, needle);
    }
    // SAFETY: our own arguments.
    unsafe { call_super(args) }
}

unsafe extern "C" fn symbol_compare(this: VALUE, other: VALUE) -> VALUE {
    if this != other {
        if let (Some(a), Some(b)) = (symbol_name(this), symbol_name(other)) {
            // SAFETY: inside a C method call.
            compare_sites::bytes(unsafe { compare_sites::caller() }, a, b);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

/// What a missed Hash lookup compares its key against.
struct MissedKey {
    site: SiteId,
    key: VALUE,
    reported: usize,
}

unsafe extern "C" fn hash_lookup(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if let Some(&key) = args.first() {
        // SAFETY: inside a C method call; `this` is a Hash (the hook is
        // only prepended to Hash).
        unsafe { report_hash_miss(this, key) };
    }
    // SAFETY: our own arguments.
    unsafe { call_super(args) }
}

/// Reports a key that is not in the hash against (some of) its keys.
/// Only built-in key kinds whose lookup runs no Ruby code are handled.
///
/// # Safety
/// `hash` is a Hash; inside a C method call.
unsafe fn report_hash_miss(hash: VALUE, key: VALUE) {
    // SAFETY (caller): reads the key's class pointer only.
    let simple = unsafe {
        rb_sys::FIXNUM_P(key)
            || rb_sys::STATIC_SYM_P(key)
            || (!rb_sys::SPECIAL_CONST_P(key) && rb_sys::rb_obj_class(key) == rb_sys::rb_cString)
    };
    if !simple {
        return;
    }
    // SAFETY: Integer, Symbol and plain String keys hash and compare in C.
    let missing = unsafe { rb_sys::rb_hash_lookup2(hash, key, rb_sys::Qundef as VALUE) }
        == rb_sys::Qundef as VALUE;
    if !missing {
        return;
    }
    let mut missed = MissedKey {
        // SAFETY (caller): inside a C method call.
        site: unsafe { compare_sites::caller() },
        key,
        reported: 0,
    };
    unsafe extern "C" fn each(candidate: VALUE, _value: VALUE, arg: VALUE) -> c_int {
        // SAFETY: `arg` is the MissedKey below, alive during the iteration.
        let missed = unsafe { &mut *(arg as *mut MissedKey) };
        if let (Some(a), Some(b)) = (integer_bits(missed.key), integer_bits(candidate)) {
            compare_sites::cmp8(missed.site, a, b);
        } else if let (Some(a), Some(b)) = (
            string_bytes(missed.key).or_else(|| symbol_name(missed.key)),
            string_bytes(candidate).or_else(|| symbol_name(candidate)),
        ) {
            compare_sites::bytes(missed.site, a, b);
        }
        missed.reported += 1;
        c_int::from(missed.reported >= HASH_KEYS_REPORTED) // ST_STOP = 1
    }
    // SAFETY: the callback runs no Ruby code and does not modify the hash.
    unsafe {
        rb_sys::rb_hash_foreach(hash, Some(each), &mut missed as *mut MissedKey as VALUE);
    }
}

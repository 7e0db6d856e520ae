//! Ruby methods that report comparisons to libFuzzer, then defer to the
//! original method with `super`.
//!
//! `Ruzzy::CompareHooks::{Integer,String,Symbol,Hash}Hooks` are defined at
//! `require` time, with the modules whose methods live in `regex_hooks`
//! (`RegexpHooks`, `StringPatternHooks`, `ScannerHooks`) and
//! `number_hooks` (`FloatHooks`, `KernelConversionHooks`,
//! `StringConversionHooks`), but only prepended to the core classes when
//! fuzzing starts (`Ruzzy::CompareHooks.install`), so a program that merely
//! requires ruzzy keeps the interpreter's fast paths for `==`, `<`, `[]`...
//!
//! Semantics never change: each hook only reads its operands' raw contents
//! (Integers that fit in 64 bits, Strings and Symbols of any class, no Ruby
//! method is called), reports them, and returns exactly what `super`
//! returns (same block, same keywords), or lets its exception propagate.
//! Refinements at the call site take precedence over the hooks, and a
//! method the program redefines still runs (it is `super` of the hook).
//!
//! Fast path: `super` costs a method lookup and a frame. When both operands
//! are Fixnums (Integer hooks) or Strings (String `==`, `!=`, `eql?`, `===`,
//! `<=>`) and the method behind the hook is still Ruby's own definition,
//! the hook returns the result Ruby's definition computes for those
//! operands (`rb_str_equal`, `rb_str_cmp`, Fixnum arithmetic) instead.
//! Whether a definition is Ruby's own is checked when the hooks are
//! installed (`rb_method_basic_definition_p`) and tracked afterwards
//! (`method_added`, `method_removed` and `method_undefined` on the hooked
//! classes report to [`method_changed`]).
//!
//! Invariants: no allocation; Ruby code runs in `super` (last in the
//! comparison hooks; first in the pattern and conversion hooks, which look
//! at its result) and, after it, only in reads made under `rb::protect`
//! (StringScanner's `string` and `pos`), so a Ruby exception raised by
//! `super` unwinds through hook frames that own nothing (no destructor is
//! skipped).

use crate::compare_sites::{self, SiteId};
use crate::{number_feedback, number_hooks, regex_hooks};
use magnus::{function, prelude::*, rb_sys::AsRawValue, Error, RModule, Symbol, Value};
use rb_sys::{ruby_value_type, VALUE};
use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicBool, Ordering};

/// Hooked operations with a fast path.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Op {
    IntEq,
    IntNe,
    IntLt,
    IntLe,
    IntGt,
    IntGe,
    IntCmp,
    IntEql,
    IntEqq,
    StrEq,
    StrNe,
    StrEql,
    StrEqq,
    StrCmp,
}

const OPS: usize = 14;

/// (class is String, method name, op) for every fast-path operation.
const FAST_PATHS: [(bool, &CStr, Op); OPS] = [
    (false, c"==", Op::IntEq),
    (false, c"!=", Op::IntNe),
    (false, c"<", Op::IntLt),
    (false, c"<=", Op::IntLe),
    (false, c">", Op::IntGt),
    (false, c">=", Op::IntGe),
    (false, c"<=>", Op::IntCmp),
    (false, c"eql?", Op::IntEql),
    (false, c"===", Op::IntEqq),
    (true, c"==", Op::StrEq),
    (true, c"!=", Op::StrNe),
    (true, c"eql?", Op::StrEql),
    (true, c"===", Op::StrEqq),
    (true, c"<=>", Op::StrCmp),
];

/// Whether each op's method behind the hook is Ruby's own definition.
static BUILTIN: [AtomicBool; OPS] = [const { AtomicBool::new(false) }; OPS];

fn builtin(op: Op) -> bool {
    BUILTIN[op as usize].load(Ordering::Relaxed)
}

fn class_of_op(is_string: bool) -> VALUE {
    // SAFETY: core class globals, set at interpreter start.
    unsafe {
        if is_string {
            rb_sys::rb_cString
        } else {
            rb_sys::rb_cInteger
        }
    }
}

/// `CompareHooks._snapshot_builtins`: records which hooked methods are
/// Ruby's own definitions. Called before the hooks are prepended.
fn snapshot_builtins() {
    for (is_string, name, op) in FAST_PATHS {
        let class = class_of_op(is_string);
        let basic = |name: &CStr| {
            // SAFETY: a core class and an interned name; no Ruby code runs.
            unsafe { rb_sys::rb_method_basic_definition_p(class, crate::rb::intern(name)) != 0 }
        };
        // `!=` calls `==`: both must be Ruby's own.
        let own = basic(name) && (name != c"!=" || basic(c"=="));
        BUILTIN[op as usize].store(own, Ordering::Relaxed);
    }
}

/// `CompareHooks._method_changed(klass, name)`: a method of a hooked class
/// was defined, removed or undefined; its fast path (and that of `!=` when
/// `==` changed) is turned off for good.
fn method_changed(klass: Value, name: Symbol) -> Result<(), Error> {
    let name = name.name()?;
    for (is_string, op_name, op) in FAST_PATHS {
        let same_class = klass.as_raw() == class_of_op(is_string);
        let affected = op_name.to_bytes() == name.as_bytes() || (op_name == c"!=" && name == "==");
        if same_class && affected {
            BUILTIN[op as usize].store(false, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Arity -1 C method: (argc, argv, self).
pub type VarArgs = unsafe extern "C" fn(c_int, *const VALUE, VALUE) -> VALUE;
/// Arity 1 C method.
type OneArg = unsafe extern "C" fn(VALUE, VALUE) -> VALUE;
/// Arity 2 C method.
type TwoArgs = unsafe extern "C" fn(VALUE, VALUE, VALUE) -> VALUE;

/// How many keys a missed Hash lookup is compared against.
const HASH_KEYS_REPORTED: usize = 64;

/// Defines the hook modules under `Ruzzy::CompareHooks`.
pub fn define(ruzzy: RModule) -> Result<(), Error> {
    let hooks = ruzzy.define_module("CompareHooks")?;

    hooks.define_module_function("_snapshot_builtins", function!(snapshot_builtins, 0))?;
    hooks.define_module_function("_method_changed", function!(method_changed, 2))?;

    let integer = hooks.define_module("IntegerHooks")?;
    one_arg(integer, c"==", integer_compare::<{ Op::IntEq as u8 }>);
    one_arg(integer, c"!=", integer_compare::<{ Op::IntNe as u8 }>);
    one_arg(integer, c"<", integer_compare::<{ Op::IntLt as u8 }>);
    one_arg(integer, c"<=", integer_compare::<{ Op::IntLe as u8 }>);
    one_arg(integer, c">", integer_compare::<{ Op::IntGt as u8 }>);
    one_arg(integer, c">=", integer_compare::<{ Op::IntGe as u8 }>);
    one_arg(integer, c"<=>", integer_compare::<{ Op::IntCmp as u8 }>);
    one_arg(integer, c"eql?", integer_compare::<{ Op::IntEql as u8 }>);
    one_arg(integer, c"===", integer_compare::<{ Op::IntEqq as u8 }>);
    for name in [c"/", c"%", c"div", c"divmod", c"modulo"] {
        one_arg(integer, name, integer_divide);
    }
    two_args(integer, c"between?", integer_between);

    let string = hooks.define_module("StringHooks")?;
    one_arg(string, c"==", string_compare::<{ Op::StrEq as u8 }>);
    one_arg(string, c"!=", string_compare::<{ Op::StrNe as u8 }>);
    one_arg(string, c"eql?", string_compare::<{ Op::StrEql as u8 }>);
    one_arg(string, c"===", string_compare::<{ Op::StrEqq as u8 }>);
    one_arg(string, c"<=>", string_compare::<{ Op::StrCmp as u8 }>);
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
    define_pattern_hooks(hooks)?;
    define_number_hooks(hooks)?;
    compare_sites::init();
    regex_hooks::init();
    Ok(())
}

/// Regexp, String-with-pattern and StringScanner hooks (`regex_hooks`).
fn define_pattern_hooks(hooks: RModule) -> Result<(), Error> {
    use regex_hooks::{regexp_match, regexp_operator, scanner, string_pattern};
    use regex_hooks::{FAILS_WHEN_FALSY, FAILS_WHEN_UNSPLIT, FAILS_WITHOUT_MATCH_DATA};
    let regexp = hooks.define_module("RegexpHooks")?;
    var_args(regexp, c"match", regexp_match);
    var_args(regexp, c"match?", regexp_match);
    one_arg(regexp, c"=~", regexp_operator);
    one_arg(regexp, c"===", regexp_operator);

    let string = hooks.define_module("StringPatternHooks")?;
    var_args(string, c"match", string_pattern::<FAILS_WHEN_FALSY, true>);
    var_args(string, c"match?", string_pattern::<FAILS_WHEN_FALSY, true>);
    for name in [c"=~", c"[]", c"slice"] {
        var_args(string, name, string_pattern::<FAILS_WHEN_FALSY, false>);
    }
    for name in [c"scan", c"sub", c"gsub", c"sub!", c"gsub!"] {
        var_args(
            string,
            name,
            string_pattern::<FAILS_WITHOUT_MATCH_DATA, false>,
        );
    }
    var_args(
        string,
        c"split",
        string_pattern::<FAILS_WHEN_UNSPLIT, false>,
    );

    let scanner_hooks = hooks.define_module("ScannerHooks")?;
    for name in [c"scan", c"check", c"match?", c"skip"] {
        var_args(scanner_hooks, name, scanner::<true>);
    }
    for name in [c"scan_until", c"check_until", c"skip_until", c"exist?"] {
        var_args(scanner_hooks, name, scanner::<false>);
    }
    Ok(())
}

/// Float comparison and text-to-number conversion hooks (`number_hooks`).
fn define_number_hooks(hooks: RModule) -> Result<(), Error> {
    let float = hooks.define_module("FloatHooks")?;
    for name in [
        c"==", c"!=", c"<", c"<=", c">", c">=", c"<=>", c"eql?", c"===",
    ] {
        one_arg(float, name, number_hooks::float_compare);
    }
    let kernel = hooks.define_module("KernelConversionHooks")?;
    let conversions: [(&CStr, VarArgs); 2] = [
        (c"Integer", number_hooks::kernel_conversion::<false>),
        (c"Float", number_hooks::kernel_conversion::<true>),
    ];
    for (name, function) in conversions {
        define_method(kernel, name, function, -1, Visibility::Private);
    }
    let string = hooks.define_module("StringConversionHooks")?;
    for name in [c"to_i", c"to_f"] {
        var_args(string, name, number_hooks::string_conversion);
    }
    Ok(())
}

/// Whether a hook method is public (like the methods it wraps) or private
/// (Kernel's conversion functions).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    Public,
    Private,
}

/// Defines `function` (a C method of the given arity: -1 for
/// (argc, argv, self), else self plus that many arguments) on `module`.
pub fn define_method<F: Copy>(
    module: RModule,
    name: &CStr,
    function: F,
    arity: c_int,
    visibility: Visibility,
) {
    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<unsafe extern "C" fn() -> VALUE>()
    );
    // SAFETY: `F` is one of the extern "C" function pointer types above,
    // matching `arity`; Ruby casts the pointer back according to it.
    unsafe {
        let pointer = std::mem::transmute_copy::<F, unsafe extern "C" fn() -> VALUE>(&function);
        let definer = match visibility {
            Visibility::Public => rb_sys::rb_define_method,
            Visibility::Private => rb_sys::rb_define_private_method,
        };
        definer(module.as_raw(), name.as_ptr(), Some(pointer), arity);
    }
}

pub fn one_arg(module: RModule, name: &CStr, function: OneArg) {
    define_method(module, name, function, 1, Visibility::Public);
}

fn two_args(module: RModule, name: &CStr, function: TwoArgs) {
    define_method(module, name, function, 2, Visibility::Public);
}

pub fn var_args(module: RModule, name: &CStr, function: VarArgs) {
    define_method(module, name, function, -1, Visibility::Public);
}

/// `super` with the given arguments, the current block and keywords.
///
/// # Safety
/// Called from a hook method with its own arguments.
pub unsafe fn call_super(args: &[VALUE]) -> VALUE {
    // SAFETY (caller): inside a C method frame; argv has argc values.
    unsafe {
        let keywords = rb_sys::rb_keyword_given_p();
        rb_sys::rb_call_super_kw(args.len() as c_int, args.as_ptr(), keywords)
    }
}

/// The arguments of an arity -1 hook and what `super` returns for them,
/// for hooks that look at the result before they report.
///
/// # Safety
/// Called from an arity -1 hook method with its own `argc` and `argv`.
pub unsafe fn super_first<'a>(argc: c_int, argv: *const VALUE) -> (&'a [VALUE], VALUE) {
    // SAFETY (caller): Ruby's arity -1 convention; our own arguments.
    unsafe {
        let args = arguments(argc, argv);
        (args, call_super(args))
    }
}

/// The value of an Integer that fits in 64 bits (signed or unsigned).
pub fn integer_bits(value: VALUE) -> Option<u64> {
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
pub fn string_bytes(value: VALUE) -> Option<&'static [u8]> {
    // SAFETY: checks the type before reading; the bytes are only used
    // before any Ruby code runs.
    unsafe { crate::location::string_bytes(value) }
}

pub fn symbol_name(value: VALUE) -> Option<&'static [u8]> {
    // SAFETY: type check first; rb_sym2str returns the symbol's frozen
    // name without allocating.
    unsafe {
        if !rb_sys::STATIC_SYM_P(value) && !rb_sys::RB_DYNAMIC_SYM_P(value) {
            return None;
        }
        string_bytes(rb_sys::rb_sym2str(value))
    }
}

fn boolean(value: bool) -> VALUE {
    if value {
        rb_sys::Qtrue as VALUE
    } else {
        rb_sys::Qfalse as VALUE
    }
}

fn ordering(order: std::cmp::Ordering) -> VALUE {
    // INT2FIX(-1 | 0 | 1)
    ((order as i64) << 1 | 1) as VALUE
}

/// The op a hook was instantiated for (`OP` is a const generic, so this
/// folds to a constant instead of searching a table on every comparison).
const fn op_from(code: u8) -> Op {
    match code {
        c if c == Op::IntNe as u8 => Op::IntNe,
        c if c == Op::IntLt as u8 => Op::IntLt,
        c if c == Op::IntLe as u8 => Op::IntLe,
        c if c == Op::IntGt as u8 => Op::IntGt,
        c if c == Op::IntGe as u8 => Op::IntGe,
        c if c == Op::IntCmp as u8 => Op::IntCmp,
        c if c == Op::IntEql as u8 => Op::IntEql,
        c if c == Op::IntEqq as u8 => Op::IntEqq,
        c if c == Op::StrEq as u8 => Op::StrEq,
        c if c == Op::StrNe as u8 => Op::StrNe,
        c if c == Op::StrEql as u8 => Op::StrEql,
        c if c == Op::StrEqq as u8 => Op::StrEqq,
        c if c == Op::StrCmp as u8 => Op::StrCmp,
        _ => Op::IntEq,
    }
}

/// What Ruby's Integer method computes for two Fixnums.
fn fixnum_result(op: Op, a: i64, b: i64) -> VALUE {
    match op {
        Op::IntNe => boolean(a != b),
        Op::IntLt => boolean(a < b),
        Op::IntLe => boolean(a <= b),
        Op::IntGt => boolean(a > b),
        Op::IntGe => boolean(a >= b),
        Op::IntCmp => ordering(a.cmp(&b)),
        _ => boolean(a == b),
    }
}

unsafe extern "C" fn integer_compare<const OP: u8>(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(a), Some(b)) = (integer_bits(this), integer_bits(other)) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            compare_sites::cmp8(site, a, b);
            number_feedback::integers(site, a, b);
        }
        let op = const { op_from(OP) };
        if rb_sys::FIXNUM_P(this) && rb_sys::FIXNUM_P(other) && builtin(op) {
            return fixnum_result(op, a as i64, b as i64);
        }
    } else {
        // SAFETY: inside a C method call.
        unsafe { number_hooks::integer_with_float(this, other) };
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn integer_divide(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(_), Some(divisor)) = (integer_bits(this), integer_bits(other)) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            compare_sites::div8(site, divisor);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn integer_between(this: VALUE, min: VALUE, max: VALUE) -> VALUE {
    // SAFETY: inside a C method call.
    if let (Some(value), Some(site)) = (integer_bits(this), unsafe { compare_sites::caller() }) {
        for bound in [min, max].into_iter().filter_map(integer_bits) {
            compare_sites::cmp8(site, value, bound);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[min, max]) }
}

unsafe extern "C" fn string_compare<const OP: u8>(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(a), Some(b)) = (string_bytes(this), string_bytes(other)) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            compare_sites::bytes(site, a, b);
        }
        let op = const { op_from(OP) };
        if builtin(op) {
            // SAFETY: two Strings: rb_str_equal and rb_str_cmp compare
            // bytes and encodings in C, exactly as String#== and #<=> do
            // for a String argument; no Ruby code runs.
            return unsafe {
                match op {
                    Op::StrNe => {
                        boolean(rb_sys::rb_str_equal(this, other) != rb_sys::Qtrue as VALUE)
                    }
                    Op::StrCmp => ordering(rb_sys::rb_str_cmp(this, other).cmp(&0)),
                    _ => rb_sys::rb_str_equal(this, other),
                }
            };
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

/// The arguments of an arity -1 method as a slice.
///
/// # Safety
/// `argv` has `argc` values (Ruby's calling convention for arity -1).
pub unsafe fn arguments<'a>(argc: c_int, argv: *const VALUE) -> &'a [VALUE] {
    if argc <= 0 || argv.is_null() {
        return &[];
    }
    // SAFETY (caller).
    unsafe { std::slice::from_raw_parts(argv, argc as usize) }
}

unsafe extern "C" fn string_start_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    // SAFETY: inside a C method call.
    if let (Some(text), Some(site)) = (string_bytes(this), unsafe { compare_sites::caller() }) {
        for prefix in args.iter().copied().filter_map(string_bytes) {
            compare_sites::bytes(site, &text[..text.len().min(prefix.len())], prefix);
        }
    }
    // SAFETY: our own arguments.
    let result = unsafe { call_super(args) };
    if result == rb_sys::Qfalse as VALUE {
        if let Some(text) = string_bytes(this) {
            for &pattern in args {
                // SAFETY: inside the hook, after super; Strings are
                // skipped (reported above), Regexps reported.
                unsafe { regex_hooks::start_with_failed(text, pattern) };
            }
        }
    }
    result
}

unsafe extern "C" fn string_end_with(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    // SAFETY: inside a C method call.
    if let (Some(text), Some(site)) = (string_bytes(this), unsafe { compare_sites::caller() }) {
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
        if let Some(site) = unsafe { compare_sites::caller() } {
            compare_sites::substring(site, text, needle);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

unsafe extern "C" fn string_index(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if args
        .first()
        .is_some_and(|&pattern| string_bytes(pattern).is_none())
    {
        // A Regexp (or an invalid argument super rejects).
        // SAFETY: the same arguments, forwarded.
        return unsafe {
            regex_hooks::string_pattern::<{ regex_hooks::FAILS_WHEN_FALSY }, true>(argc, argv, this)
        };
    }
    if let (Some(text), Some(needle)) = (
        string_bytes(this),
        args.first().copied().and_then(string_bytes),
    ) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            compare_sites::substring(site, text, needle);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(args) }
}

unsafe extern "C" fn symbol_compare(this: VALUE, other: VALUE) -> VALUE {
    if this != other {
        if let (Some(a), Some(b)) = (symbol_name(this), symbol_name(other)) {
            // SAFETY: inside a C method call.
            if let Some(site) = unsafe { compare_sites::caller() } {
                compare_sites::bytes(site, a, b);
            }
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
    // SAFETY (caller): inside a C method call.
    let Some(site) = (unsafe { compare_sites::caller() }) else {
        return;
    };
    // SAFETY: Integer, Symbol and plain String keys hash and compare in C.
    let missing = unsafe { rb_sys::rb_hash_lookup2(hash, key, rb_sys::Qundef as VALUE) }
        == rb_sys::Qundef as VALUE;
    if !missing {
        return;
    }
    let mut missed = MissedKey {
        site,
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

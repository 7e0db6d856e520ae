//! Float comparisons and the conversions that turn input text into numbers
//! (see `feedback::numbers` for what they report).
//!
//! `FloatHooks` (prepended to Float) reports `==`, `!=`, `<`, `<=`, `>`,
//! `>=`, `<=>`, `eql?` and `===` between a Float and a Float or Integer.
//! `KernelConversionHooks` (prepended to Kernel, as private methods like
//! the originals) and `StringConversionHooks` (String) record what
//! `Integer()`, `Float()`, `String#to_i` and `String#to_f` read and made.

use super::{builtin, FastPath, Hook, HookModule};
use crate::feedback::compare_sites;
use crate::feedback::numbers;
use crate::rb::method::Function;
use crate::rb::value::{fixnum_value, float_value, integer_bits, Frame, MethodCall};
use rb_sys::VALUE;
use std::ffi::c_int;

pub const FLOAT_HOOKS: HookModule = HookModule {
    group: "float",
    class: c"Float",
    module: "FloatHooks",
    hooks: &[Hook::new(
        &[
            c"==", c"!=", c"<", c"<=", c">", c">=", c"<=>", c"eql?", c"===",
        ],
        Function::One(float_compare),
    )],
};

pub const KERNEL_HOOKS: HookModule = HookModule {
    group: "conversion",
    class: c"Kernel",
    module: "KernelConversionHooks",
    hooks: &[
        Hook::new(&[c"Integer"], Function::Var(kernel_conversion::<false>)).private(),
        Hook::new(&[c"Float"], Function::Var(kernel_conversion::<true>)).private(),
    ],
};

pub const STRING_HOOKS: HookModule = HookModule {
    group: "conversion",
    class: c"String",
    module: "StringConversionHooks",
    hooks: &[
        Hook::new(&[c"to_i"], Function::Var(string_to_i)).fast(FastPath::StringToI),
        Hook::new(&[c"to_f"], Function::Var(string_to_f)).fast(FastPath::StringToF),
    ],
};

/// The value of a Float, or of an Integer as a Float.
fn float_or_integer(value: VALUE) -> Option<f64> {
    float_value(value).or_else(|| integer_bits(value).map(|bits| bits as i64 as f64))
}

/// Reports a comparison of two numbers, at least one of them a Float.
fn report_floats(frame: &Frame, a: f64, b: f64) {
    if let Some(site) = compare_sites::caller(frame) {
        compare_sites::reach(site);
        numbers::floats(site, a, b);
    }
}

unsafe extern "C" fn float_compare(this: VALUE, other: VALUE) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if let (Some(a), Some(b)) = (float_or_integer(this), float_or_integer(other)) {
        report_floats(&call, a, b);
    }
    call.call_super()
}

/// An Integer compared with the Float `other` (from the Integer hooks).
pub fn integer_with_float(frame: &Frame, this: VALUE, other: f64) {
    if let Some(a) = float_or_integer(this) {
        report_floats(frame, a, other);
    }
}

/// Records a conversion of `text` that produced `result`.
fn record(frame: &Frame, text: VALUE, result: VALUE) {
    let Some(bytes) = frame.string_bytes(text) else {
        return;
    };
    if let Some(value) = integer_bits(result) {
        numbers::record_integer(bytes, value);
    } else if let Some(value) = float_value(result) {
        numbers::record_float(bytes, value);
    }
}

/// `Integer(arg, ...)` (`FLOAT` false) and `Float(arg, ...)` (true). A
/// String they will reject proposes itself with its stray bytes as digits.
unsafe extern "C" fn kernel_conversion<const FLOAT: bool>(
    argc: c_int,
    argv: *const VALUE,
    _this: VALUE,
) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let text = call.first();
    if let Some(bytes) = call.string_bytes(text) {
        if let Some(site) = compare_sites::caller(&call) {
            compare_sites::reach(site);
            numbers::check_number_text(site, bytes, FLOAT);
        }
    }
    let result = call.call_super();
    record(&call, text, result);
    result
}

/// `String#to_i(base = 10)`; Ruby's own while it is, for a base it accepts
/// (others raise in `super`, with its message).
unsafe extern "C" fn string_to_i(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let base = match call.args() {
        [] => Some(10),
        [base] => fixnum_value(*base).filter(|&base| base == 0 || (2..=36).contains(&base)),
        _ => None,
    };
    let result = match base {
        // SAFETY: `this` is a String (the hook is one of its methods); a
        // base `rb_str_to_inum` takes.
        Some(base) if builtin(FastPath::StringToI) => unsafe {
            call.string_to_i(this, base as c_int)
        },
        _ => call.call_super(),
    };
    record(&call, this, result);
    result
}

/// `String#to_f`; Ruby's own while it is.
unsafe extern "C" fn string_to_f(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = if argc == 0 && builtin(FastPath::StringToF) {
        // SAFETY: `this` is a String (the hook is one of its methods).
        unsafe { call.string_to_f(this) }
    } else {
        call.call_super()
    };
    record(&call, this, result);
    result
}

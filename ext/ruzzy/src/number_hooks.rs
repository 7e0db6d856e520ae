//! Ruby methods for Float comparisons and for the conversions that turn
//! input text into numbers (see `number_feedback` for what they report).
//!
//! `Ruzzy::CompareHooks::FloatHooks` (prepended to Float) reports `==`,
//! `!=`, `<`, `<=`, `>`, `>=`, `<=>`, `eql?` and `===` between a Float
//! and a Float or Integer. `KernelConversionHooks` (prepended to Kernel,
//! as private methods like the originals) and `StringConversionHooks`
//! (String) record what `Integer()`, `Float()`, `String#to_i` and
//! `String#to_f` read and made.
//!
//! Invariants: each hook returns exactly what `super` returns (same
//! arguments, block and keywords) or lets its exception propagate; they
//! read their operands' raw contents only; no allocation.

use crate::compare_hooks::{arguments, call_super, integer_bits, string_bytes, super_first};
use crate::compare_sites;
use crate::number_feedback;
use rb_sys::VALUE;
use std::ffi::c_int;

/// The value of a Float, or of an Integer as a Float.
fn float_or_integer(value: VALUE) -> Option<f64> {
    // SAFETY: the type check comes first; rb_float_value reads a Float.
    if unsafe { rb_sys::RB_FLOAT_TYPE_P(value) } {
        return Some(unsafe { rb_sys::rb_float_value(value) });
    }
    integer_bits(value).map(|bits| bits as i64 as f64)
}

/// Float comparison operators.
pub unsafe extern "C" fn float_compare(this: VALUE, other: VALUE) -> VALUE {
    if let (Some(a), Some(b)) = (float_or_integer(this), float_or_integer(other)) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            number_feedback::floats(site, a, b);
        }
    }
    // SAFETY: our own arguments.
    unsafe { call_super(&[other]) }
}

/// An Integer compared with a Float (from the Integer hooks).
///
/// # Safety
/// Inside a C method call.
pub unsafe fn integer_with_float(this: VALUE, other: VALUE) {
    // SAFETY: type checked first.
    if !unsafe { rb_sys::RB_FLOAT_TYPE_P(other) } {
        return;
    }
    if let (Some(a), Some(b)) = (float_or_integer(this), float_or_integer(other)) {
        // SAFETY (caller): inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            number_feedback::floats(site, a, b);
        }
    }
}

/// Records a conversion of `text` that produced `result`.
fn record(text: VALUE, result: VALUE) {
    let Some(bytes) = string_bytes(text) else {
        return;
    };
    if let Some(value) = integer_bits(result) {
        number_feedback::record_integer(bytes, value);
    // SAFETY: type check before reading the Float.
    } else if unsafe { rb_sys::RB_FLOAT_TYPE_P(result) } {
        number_feedback::record_float(bytes, unsafe { rb_sys::rb_float_value(result) });
    }
}

/// `Integer(arg, ...)` (`FLOAT` false) and `Float(arg, ...)` (true). A
/// String they will reject proposes itself with its stray bytes as digits.
pub unsafe extern "C" fn kernel_conversion<const FLOAT: bool>(
    argc: c_int,
    argv: *const VALUE,
    _this: VALUE,
) -> VALUE {
    // SAFETY: Ruby's arity -1 convention.
    let args = unsafe { arguments(argc, argv) };
    if let Some(text) = args.first().copied().and_then(string_bytes) {
        // SAFETY: inside a C method call.
        if let Some(site) = unsafe { compare_sites::caller() } {
            number_feedback::check_number_text(site, text, FLOAT);
        }
    }
    // SAFETY: our own arguments.
    let result = unsafe { call_super(args) };
    if let Some(&text) = args.first() {
        record(text, result);
    }
    result
}

/// `String#to_i(base = 10)` and `String#to_f`.
pub unsafe extern "C" fn string_conversion(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: an arity -1 hook's own arguments.
    let (_, result) = unsafe { super_first(argc, argv) };
    record(this, result);
    result
}

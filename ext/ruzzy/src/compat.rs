//! Ruzzy 0.8's native module functions, for harnesses and tools that call
//! them directly: `Ruzzy.c_libfuzzer_is_loaded`, `Ruzzy.c_trace_cmp8` and
//! `Ruzzy.c_trace_div8`.
//!
//! Invariant: the trace functions report only Fixnum operands (as 0.8 did),
//! from the Ruby call site that called them, and allocate nothing.
//!
//! May use: crate::coverage, crate::feedback, crate::process, crate::rb.

use crate::feedback::compare_sites::{self, SiteId};
use crate::process::libfuzzer;
use crate::rb::value::Frame;
use magnus::{Fixnum, Value};

/// Whether libFuzzer's driver can be found: always true once the extension
/// is loaded, since it carries libFuzzer (a preloaded one is used first).
pub fn libfuzzer_is_loaded() -> bool {
    let _ = libfuzzer::get().run_driver;
    true
}

fn fixnum_bits(value: Value) -> Option<u64> {
    Fixnum::from_value(value).map(|fixnum| fixnum.to_i64() as u64)
}

/// `Ruzzy.c_trace_cmp8(a, b)`: reports an Integer comparison; returns nil.
pub fn trace_cmp8(a: Value, b: Value) {
    if let (Some(a), Some(b)) = (fixnum_bits(a), fixnum_bits(b)) {
        // SAFETY: called as a function by the interpreter.
        let frame = unsafe { Frame::enter() };
        // An explicit report counts even from code that is not instrumented.
        let site = compare_sites::caller(&frame).unwrap_or(SiteId::UNKNOWN);
        compare_sites::reach(site);
        compare_sites::cmp8(site, a, b);
    }
}

/// `Ruzzy.c_trace_div8(divisor)`: reports an Integer divisor; returns nil.
pub fn trace_div8(divisor: Value) {
    if let Some(divisor) = fixnum_bits(divisor) {
        // SAFETY: called as a function by the interpreter.
        let frame = unsafe { Frame::enter() };
        // An explicit report counts even from code that is not instrumented.
        let site = compare_sites::caller(&frame).unwrap_or(SiteId::UNKNOWN);
        compare_sites::reach(site);
        compare_sites::div8(site, divisor);
    }
}

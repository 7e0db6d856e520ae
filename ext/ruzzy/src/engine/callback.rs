//! The per-input callback that libFuzzer calls (`LLVMFuzzerTestOneInput`).
//!
//! For each input it creates one binary (ASCII-8BIT) Ruby String and calls
//! the target's `call` under `rb_protect`, between the participants'
//! before and after ([`crate::engine::lifecycle`], which times it), then
//! judges the outcome: a finding a bug detector held during the input wins
//! over what the target returned or raised; a normal return is timed
//! against the others ([`crate::findings::slow_inputs`]) and mapped to
//! libFuzzer's return codes. An input rejected (-1) leaves nothing new for
//! the engine to keep ([`crate::engine::rejection`]). Nothing else is
//! allocated on this path and no lock is taken.
//!
//! Invariants:
//! - a Ruby exception never unwinds through libFuzzer: it is caught here and
//!   handed to [`crate::findings::report`], which ends the process, or in
//!   a campaign records the finding and rejects the input;
//! - a Rust panic never crosses into libFuzzer or Ruby: the panic hook of
//!   [`crate::process::internal_error`] ends the process before any unwinding;
//! - the target is registered with the GC as a global (pinned, so
//!   `GC.compact` never moves it) before the first call.

use crate::engine::lifecycle::{self, InputOutcome};
use crate::engine::rejection;
use crate::findings::report;
use crate::findings::slow_inputs;
use crate::rb;
use rb_sys::{ruby_special_consts, VALUE};
use std::ffi::c_int;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The target callable. Written once before the driver starts.
static TARGET: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// `ID` of `call`, interned at install time.
static ID_CALL: AtomicUsize = AtomicUsize::new(0);
/// Whether some exceptions are expected (`ignore:`), so a raised
/// exception must first be checked against the list.
static IGNORING: AtomicBool = AtomicBool::new(false);

const FIXNUM_ZERO: VALUE = 1; // INT2FIX(0)
const FIXNUM_MINUS_ONE: VALUE = !0; // INT2FIX(-1): all bits set
const _: () = assert!(ruby_special_consts::RUBY_Qnil as VALUE == rb::QNIL);

/// What the target said about one input.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `nil` or `0`: keep the input if it found something new.
    Keep,
    /// `-1`, or any other Integer: never add this input to the corpus
    /// (libFuzzer treats every non-zero result so; Ruzzy 0.8 passed such
    /// values through).
    Reject,
}

impl Verdict {
    /// Interprets the target's return value; `None` for anything but nil
    /// and Integers.
    pub fn from_return(value: VALUE) -> Option<Verdict> {
        match value {
            rb::QNIL | FIXNUM_ZERO => Some(Verdict::Keep),
            FIXNUM_MINUS_ONE => Some(Verdict::Reject),
            _ if rb::value::is_integer(value) => Some(Verdict::Reject),
            _ => None,
        }
    }

    fn code(self) -> c_int {
        match self {
            Verdict::Keep => 0,
            Verdict::Reject => -1,
        }
    }
}

/// Registers `target` as the callable to fuzz. Called once, with the GVL.
/// `ignoring` says whether `Ruzzy::Findings::Report.ignored?` must be consulted.
pub fn install_target(target: VALUE, ignoring: bool) {
    IGNORING.store(ignoring, Ordering::Relaxed);
    TARGET.store(target as usize, Ordering::Relaxed);
    ID_CALL.store(rb::intern(c"call") as usize, Ordering::Relaxed);
    rb::register_gc_root(&TARGET);
}

/// The callback handed to `LLVMFuzzerRunDriver`.
pub unsafe extern "C" fn test_one_input(data: *const u8, size: usize) -> c_int {
    // SAFETY: libFuzzer's input, valid for `size` bytes during this call.
    match unsafe { judge_input(data, size) } {
        0 => 0,
        _ => rejection::forget_input(),
    }
}

/// Runs the target on one input and judges the outcome: 0 to keep it if it
/// found something new, -1 to reject it.
unsafe fn judge_input(data: *const u8, size: usize) -> c_int {
    let mut outcome = InputOutcome::default();
    lifecycle::before_input(data, size);
    let ran = run_target(data, size);
    lifecycle::after_input(&mut outcome);
    match (ran, outcome.held_finding) {
        (_, Some(found)) if IGNORING.load(Ordering::Relaxed) && report::ignored(found) => {
            Verdict::Keep.code()
        }
        (_, Some(found)) => {
            // SAFETY: libFuzzer's input is still valid during this call.
            let input = unsafe { std::slice::from_raw_parts(data, size) };
            report::exception(found, input)
        }
        (Ok(value), None) => {
            if let Some(median_ns) = slow_inputs::record(outcome.elapsed_ns) {
                report_if_slow_again(data, size, outcome.elapsed_ns, median_ns);
            }
            match Verdict::from_return(value) {
                Some(verdict) => verdict.code(),
                None => report::bad_return(value),
            }
        }
        (Err(error), None) if IGNORING.load(Ordering::Relaxed) && report::ignored(error) => {
            Verdict::Keep.code()
        }
        (Err(error), None) => {
            // SAFETY: libFuzzer's input is still valid during this call.
            let input = unsafe { std::slice::from_raw_parts(data, size) };
            report::exception(error, input)
        }
    }
}

/// Runs a slow input once more and reports it only if it is slow again: a
/// one-time cost (code loaded on first use, a cache filled) is not a
/// denial of service. Whatever the second run raises or a detector holds
/// is dropped: the first run decided the input's fate.
#[cold]
fn report_if_slow_again(data: *const u8, size: usize, elapsed_ns: u64, median_ns: u64) {
    let mut again = InputOutcome::default();
    lifecycle::before_rerun(data, size);
    let _ = run_target(data, size);
    lifecycle::after_input(&mut again);
    if slow_inputs::slow_again(again.elapsed_ns, median_ns) {
        // SAFETY: libFuzzer's input is still valid during this call.
        let input = unsafe { std::slice::from_raw_parts(data, size) };
        slow_inputs::report(input, elapsed_ns.min(again.elapsed_ns), median_ns);
    }
}

/// Runs the target on one input (between the lifecycle's before and after).
#[inline(never)]
fn run_target(data: *const u8, size: usize) -> Result<VALUE, VALUE> {
    // SAFETY: libFuzzer guarantees `data` points to `size` readable bytes
    // for the duration of this call.
    let bytes = unsafe { std::slice::from_raw_parts(data, size) };
    // We hold the GVL: the driver runs on the thread that called Ruzzy.fuzz.
    rb::protect(|ruby| {
        ruby.no_memory_injected_at("input");
        let input = ruby.binary_string(bytes);
        let target = TARGET.load(Ordering::Relaxed) as VALUE;
        let id_call = ID_CALL.load(Ordering::Relaxed) as rb_sys::ID;
        ruby.call(target, id_call, &[input])
    })
}

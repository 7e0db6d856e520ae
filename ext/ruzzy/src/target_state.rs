//! What the fuzz target is doing right now, for code that runs in signal
//! handlers (crashes, timeouts) and must decide whether printing the Ruby
//! backtrace makes sense.
//!
//! Invariants: only atomics and `clock_gettime` (async-signal-safe); the
//! per-input cost is two relaxed stores and one coarse clock read.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

static IN_TARGET: AtomicBool = AtomicBool::new(false);
static REPORTED: AtomicBool = AtomicBool::new(false);
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static TIMEOUT_SECS: AtomicU64 = AtomicU64::new(0);
static FUZZING_THREAD: AtomicUsize = AtomicUsize::new(0);

fn now_ns() -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes `time`; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut time) };
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

fn current_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// Records the thread that runs the target and libFuzzer's `-timeout`.
pub fn configure(timeout_secs: u64) {
    TIMEOUT_SECS.store(timeout_secs, Ordering::Relaxed);
    FUZZING_THREAD.store(current_thread(), Ordering::Relaxed);
}

/// The target starts running an input.
#[inline(always)]
pub fn begin_input() {
    STARTED_NS.store(now_ns(), Ordering::Relaxed);
    IN_TARGET.store(true, Ordering::Relaxed);
}

/// The target returned (or raised).
#[inline(always)]
pub fn end_input() {
    IN_TARGET.store(false, Ordering::Relaxed);
}

/// Marks the finding as described by ruzzy; later crash paths (libFuzzer
/// printing a stack trace) then print nothing more.
pub fn mark_reported() {
    REPORTED.store(true, Ordering::Relaxed);
}

/// Whether the current input has run for at least libFuzzer's `-timeout`.
pub fn timed_out() -> bool {
    let timeout = TIMEOUT_SECS.load(Ordering::Relaxed);
    let elapsed = now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed));
    // A coarse clock may trail libFuzzer's by a few milliseconds.
    timeout > 0 && elapsed + 50_000_000 >= timeout * 1_000_000_000
}

/// Prints the Ruby backtrace of the running target, once, if the target is
/// running on this thread. Returns whether it printed.
pub fn print_ruby_backtrace(headline: &str) -> bool {
    if !IN_TARGET.load(Ordering::Relaxed)
        || FUZZING_THREAD.load(Ordering::Relaxed) != current_thread()
        || REPORTED.swap(true, Ordering::Relaxed)
    {
        return false;
    }
    let _ = std::io::stderr().write_all(headline.as_bytes());
    // SAFETY: the target runs on this thread, so the interpreter's frame
    // stack is the target's; rb_backtrace only walks it and writes to
    // stderr. This runs only on the way to process exit (crash, timeout).
    unsafe { rb_sys::rb_backtrace() };
    true
}

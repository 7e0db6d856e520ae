//! The run's statistics: how many inputs this process has run (under every
//! engine: [`executions`]) and, for an engine that prints none of its own
//! (LibAFL's runtime), libFuzzer's final statistics
//! (`stat::number_of_executed_units`, `stat::average_exec_per_sec`),
//! printed when the run ends and after a finding ([`print_final_stats`]).
//!
//! Invariants: [`start`] is called once, before the driver starts, and only
//! for such an engine; per input, one relaxed counter increment; nothing
//! allocates, and [`print_final_stats`] is async-signal-safe.

use crate::process::output::write_stderr_fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether the final statistics are ruzzy's to print (an engine without
/// them).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// When the run started, in nanoseconds of the coarse monotonic clock.
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
/// Inputs run so far (counted under every engine: a campaign's worker
/// reports it, [`executions`]).
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The run starts at `now_ns` ([`now_ns`]'s clock), and its final
/// statistics are ruzzy's to print.
pub fn start(now_ns: u64) {
    STARTED_NS.store(now_ns, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::Relaxed);
}

/// Test only: no run started, no input counted (see
/// [`crate::process::reset_for_tests`]).
#[cfg(test)]
pub(super) fn reset_for_tests() {
    ACTIVE.store(false, Ordering::Relaxed);
    STARTED_NS.store(0, Ordering::Relaxed);
    RUNS.store(0, Ordering::Relaxed);
}

/// Whether [`start`] was called: ruzzy keeps this run's statistics and limits.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Counts one more input.
#[inline]
pub fn count_input(runs_before: u64) {
    RUNS.store(runs_before + 1, Ordering::Relaxed);
}

/// `Ruzzy::Native._executions`: the inputs run so far in this process, under
/// either engine (a campaign's worker reports it between the engine's own
/// progress lines, which libFuzzer prints only for new coverage and at
/// powers of two).
#[inline]
pub fn executions() -> u64 {
    RUNS.load(Ordering::Relaxed)
}

/// Whole seconds since [`start`].
pub fn elapsed_secs() -> u64 {
    now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed)) / 1_000_000_000
}

/// Prints libFuzzer's final statistics of a counted run (nothing
/// otherwise). Async-signal-safe: a crash report prints them too.
pub fn print_final_stats() {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let runs = RUNS.load(Ordering::Relaxed);
    let elapsed_ns = now_ns()
        .saturating_sub(STARTED_NS.load(Ordering::Relaxed))
        .max(1);
    let per_sec = u128::from(runs) * 1_000_000_000 / u128::from(elapsed_ns);
    write_stderr_fmt(format_args!(
        "stat::number_of_executed_units: {runs}\nstat::average_exec_per_sec:     {per_sec}\n"
    ));
}

/// The run's clock: nanoseconds of the coarse monotonic clock (cheap
/// enough to read once per input).
pub fn now_ns() -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut time) };
    (time.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(time.tv_nsec as u64)
}

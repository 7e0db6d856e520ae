//! Ending a run at `-runs` and `-max_total_time` for an engine that does
//! not (LibAFL's runtime reads neither flag), the way libFuzzer ends it: a
//! `Done N runs in S second(s)` line and status 0, after a campaign's
//! finding counts are written. The process ends with `_exit`: the engine's
//! own exit handlers and timers (LibAFL's per-input timeout, still armed)
//! must not turn the end of the run into a finding.
//!
//! It also counts the inputs (under every engine: [`executions`]), for libFuzzer's final statistics
//! (`stat::number_of_executed_units`, `stat::average_exec_per_sec`), printed
//! when the run ends and after a finding ([`print_final_stats`]).
//!
//! Invariants: configured once, before the driver starts, and only for such
//! an engine; per input, a relaxed counter increment when it is not
//! configured, otherwise that counter and, with a time limit, a read of the coarse
//! monotonic clock; nothing allocates until the run ends.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether the run is counted (an engine without run limits of its own).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Inputs to run (0: no limit).
static MAX_RUNS: AtomicU64 = AtomicU64::new(0);
/// When the run started and when it must end, in nanoseconds of the coarse
/// monotonic clock (the deadline 0: no limit).
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static DEADLINE_NS: AtomicU64 = AtomicU64::new(0);
/// Inputs run so far (counted under every engine: a campaign's worker
/// reports it, [`executions`]).
static RUNS: AtomicU64 = AtomicU64::new(0);

/// `Ruzzy::Native._set_run_limits(runs, seconds, rss_limit_mb)`: sets the
/// limits: `runs` inputs, `seconds` of fuzzing and `rss_limit_mb` MiB of
/// memory ([`crate::engine::memory_watch`]) (0: none).
pub fn configure(runs: u64, seconds: u64, rss_limit_mb: u64) {
    crate::engine::memory_watch::start(rss_limit_mb);
    let now = now_ns();
    MAX_RUNS.store(runs, Ordering::Relaxed);
    STARTED_NS.store(now, Ordering::Relaxed);
    let deadline = if seconds == 0 {
        0
    } else {
        now.saturating_add(seconds.saturating_mul(1_000_000_000))
    };
    DEADLINE_NS.store(deadline, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::Relaxed);
}

/// Called before each input: counts it, and ends the process when a limit
/// is reached.
#[inline]
pub fn before_input() {
    let runs = RUNS.load(Ordering::Relaxed);
    if !ACTIVE.load(Ordering::Relaxed) {
        RUNS.store(runs + 1, Ordering::Relaxed);
        return;
    }
    let max = MAX_RUNS.load(Ordering::Relaxed);
    let deadline = DEADLINE_NS.load(Ordering::Relaxed);
    if (max != 0 && runs >= max) || (deadline != 0 && now_ns() >= deadline) {
        finish(runs);
    }
    RUNS.store(runs + 1, Ordering::Relaxed);
}

/// `Ruzzy::Native._executions`: the inputs run so far in this process, under
/// either engine (a campaign's worker reports it between the engine's own
/// progress lines, which libFuzzer prints only for new coverage and at
/// powers of two).
pub fn executions() -> u64 {
    RUNS.load(Ordering::Relaxed)
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
    crate::findings::ruby_backtrace::write_stderr_fmt(format_args!(
        "stat::number_of_executed_units: {runs}\nstat::average_exec_per_sec:     {per_sec}\n"
    ));
}

fn finish(runs: u64) -> ! {
    let seconds = now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed)) / 1_000_000_000;
    crate::findings::report::flush_at_exit();
    let _ = writeln!(std::io::stderr(), "Done {runs} runs in {seconds} second(s)");
    print_final_stats();
    let _ = std::io::stdout().flush();
    // SAFETY: ends the process at once, on the fuzzing thread; everything
    // ruzzy had to write is written.
    unsafe { libc::_exit(0) }
}

fn now_ns() -> u64 {
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

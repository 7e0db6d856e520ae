//! Ending a run at `-runs` and `-max_total_time` for an engine that does
//! not (LibAFL's runtime reads neither flag), the way libFuzzer ends it: a
//! `Done N runs in S second(s)` line and status 0, after a campaign's
//! finding counts are written. The process ends with `_exit`: the engine's
//! own exit handlers and timers (LibAFL's per-input timeout, still armed)
//! must not turn the end of the run into a finding.
//!
//! The inputs are counted, and libFuzzer's final statistics printed, by
//! [`crate::process::run_stats`].
//!
//! Invariants: configured once, before the driver starts, and only for such
//! an engine; per input, a relaxed counter increment when it is not
//! configured, otherwise that counter and, with a time limit, a read of the coarse
//! monotonic clock; nothing allocates until the run ends.

use crate::process::run_stats::{self, now_ns};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// Inputs to run (0: no limit).
static MAX_RUNS: AtomicU64 = AtomicU64::new(0);
/// When the run must end, in nanoseconds of the run's clock
/// ([`run_stats::now_ns`]; 0: no limit).
static DEADLINE_NS: AtomicU64 = AtomicU64::new(0);

/// `Ruzzy::Native._set_run_limits(runs, seconds, rss_limit_mb)`: sets the
/// limits: `runs` inputs, `seconds` of fuzzing and `rss_limit_mb` MiB of
/// memory ([`crate::engine::memory_watch`]) (0: none).
pub fn configure(runs: u64, seconds: u64, rss_limit_mb: u64) {
    crate::engine::memory_watch::start(rss_limit_mb);
    let now = now_ns();
    MAX_RUNS.store(runs, Ordering::Relaxed);
    let deadline = if seconds == 0 {
        0
    } else {
        now.saturating_add(seconds.saturating_mul(1_000_000_000))
    };
    DEADLINE_NS.store(deadline, Ordering::Relaxed);
    run_stats::start(now);
}

/// Before each input ([`crate::engine::lifecycle`]): counts it, and ends
/// the process when a limit is reached.
#[inline]
pub fn before_input() {
    let runs = run_stats::executions();
    if run_stats::active() {
        let max = MAX_RUNS.load(Ordering::Relaxed);
        let deadline = DEADLINE_NS.load(Ordering::Relaxed);
        if (max != 0 && runs >= max) || (deadline != 0 && now_ns() >= deadline) {
            finish(runs);
        }
    }
    run_stats::count_input(runs);
}

fn finish(runs: u64) -> ! {
    let seconds = run_stats::elapsed_secs();
    crate::findings::report::flush_at_exit();
    let _ = writeln!(std::io::stderr(), "Done {runs} runs in {seconds} second(s)");
    run_stats::print_final_stats();
    let _ = std::io::stdout().flush();
    // SAFETY: ends the process at once, on the fuzzing thread; everything
    // ruzzy had to write is written.
    unsafe { libc::_exit(0) }
}

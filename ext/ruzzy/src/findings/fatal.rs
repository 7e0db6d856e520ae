//! Findings that end the process in native code (a deadly signal, a
//! timeout, the memory limit) under an engine that leaves them to ruzzy:
//! LibAFL's runtime names its artifacts its own way, prints no Ruby frames
//! and exits with its own statuses, so ruzzy takes these over.
//!
//! Each is reported in libFuzzer's words, so that whatever reads
//! libFuzzer's reports reads these: the `ERROR: libFuzzer:` line, the Ruby
//! backtrace of the target with its `DEDUP_TOKEN:` line, the `Reproduce:`
//! and `Minimise:` commands, the input written as `<prefix><kind><sha1>`
//! (unless it is a file given on the command line), the `SUMMARY:` line,
//! the final statistics, and libFuzzer's exit status (`-error_exitcode`
//! 77, timeouts 70, out-of-memory 71). The words, the artifact's name and
//! the status are the [`FindingKind`]'s (`lib/ruzzy/finding_kinds.rb`).
//!
//! Invariants: async-signal-safe (write(2), open(2), stack buffers, no
//! allocation, no lock); one report per process: the first caller claims
//! it, any other waits for the process to end; every report ends the
//! process with `_exit`.

use crate::finding_kind::FindingKind;
use crate::process::output::write_stderr_fmt;
use crate::process::{run_stats, target_state};
use std::sync::atomic::{AtomicBool, Ordering};

static CLAIMED: AtomicBool = AtomicBool::new(false);

/// The target died of a deadly signal (SIGSEGV in a C extension, an
/// `abort()`), on the thread that runs it.
pub fn deadly_signal() -> ! {
    claim();
    headline(FindingKind::Crash, format_args!(""));
    crate::findings::symbolize::ruzzy_print_stack_trace();
    end(FindingKind::Crash)
}

/// The target ran past `-timeout`; its Ruby backtrace is printed already.
pub fn timeout() -> ! {
    claim();
    target_state::mark_reporting_timeout();
    let seconds = target_state::running_secs();
    write_stderr_fmt(format_args!(
        "ALARM: working on the last Unit for {seconds} seconds\n       and the timeout value is {} \
         (use -timeout=N to change)\n",
        target_state::timeout_secs()
    ));
    headline(
        FindingKind::Timeout,
        format_args!(" after {seconds} seconds"),
    );
    crate::findings::symbolize::ruzzy_print_stack_trace();
    end(FindingKind::Timeout)
}

/// The process holds more than `-rss_limit_mb` (found by the memory watch,
/// on its own thread).
pub fn out_of_memory(used_mb: u64, limit_mb: u64) -> ! {
    claim();
    headline(
        FindingKind::OutOfMemory,
        format_args!(
            " (used: {used_mb}Mb; exceeds: {limit_mb}Mb)\n   To change the out-of-memory limit use \
             -rss_limit_mb=<N>"
        ),
    );
    crate::findings::reproduce::ruzzy_print_oom_reproduction();
    end(FindingKind::OutOfMemory)
}

/// Claims the report, or waits for the one under way to end the process.
fn claim() {
    if CLAIMED.swap(true, Ordering::Relaxed) {
        loop {
            // SAFETY: sleep is async-signal-safe; the reporting thread
            // ends the process.
            unsafe { libc::sleep(1) };
        }
    }
}

/// `==PID== ERROR: <reporter>: <headline><detail>` (libFuzzer's words).
fn headline(kind: FindingKind, detail: std::fmt::Arguments) {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    write_stderr_fmt(format_args!(
        "=={pid}== ERROR: {}: {}{detail}\n",
        kind.reporter(),
        kind.headline()
    ));
}

/// Writes the artifact of the input in progress, the summary and the
/// statistics, and ends the process with the kind's exit status.
fn end(kind: FindingKind) -> ! {
    if let Some(input) = target_state::input_in_progress() {
        crate::findings::reproduce::write_artifact(input, kind);
    }
    write_stderr_fmt(format_args!(
        "SUMMARY: {}: {}\n",
        kind.reporter(),
        kind.headline()
    ));
    run_stats::print_final_stats();
    // SAFETY: _exit ends the process at once; the report is complete.
    unsafe { libc::_exit(kind.exit_status().unwrap_or(libc::EXIT_FAILURE)) }
}

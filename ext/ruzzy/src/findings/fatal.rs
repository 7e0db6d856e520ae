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
//! 77, timeouts 70, out-of-memory 71: `lib/ruzzy/exit_status.rb`).
//!
//! Invariants: async-signal-safe (write(2), open(2), stack buffers, no
//! allocation, no lock); one report per process: the first caller claims
//! it, any other waits for the process to end; every report ends the
//! process with `_exit`.

use crate::process::output::{write_stderr, write_stderr_fmt};
use crate::process::{run_stats, target_state};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// `Ruzzy::EXIT_TIMEOUT` and `Ruzzy::EXIT_OUT_OF_MEMORY`, read when the
/// extension loads.
static EXIT_TIMEOUT: AtomicI32 = AtomicI32::new(70);
static EXIT_OUT_OF_MEMORY: AtomicI32 = AtomicI32::new(71);

static CLAIMED: AtomicBool = AtomicBool::new(false);

/// Takes the exit statuses from `Ruzzy` (called once, at `require`).
pub fn configure(ruzzy: magnus::RModule) -> Result<(), magnus::Error> {
    use magnus::Module;
    EXIT_TIMEOUT.store(ruzzy.const_get("EXIT_TIMEOUT")?, Ordering::Relaxed);
    EXIT_OUT_OF_MEMORY.store(ruzzy.const_get("EXIT_OUT_OF_MEMORY")?, Ordering::Relaxed);
    Ok(())
}

/// The target died of a deadly signal (SIGSEGV in a C extension, an
/// `abort()`), on the thread that runs it.
pub fn deadly_signal() -> ! {
    claim();
    headline(format_args!("deadly signal"));
    crate::findings::symbolize::ruzzy_print_stack_trace();
    end(
        b"crash-",
        "deadly signal",
        crate::findings::report::exit_finding(),
    )
}

/// The target ran past `-timeout`; its Ruby backtrace is printed already.
pub fn timeout() -> ! {
    claim();
    let seconds = target_state::running_secs();
    write_stderr_fmt(format_args!(
        "ALARM: working on the last Unit for {seconds} seconds\n       and the timeout value is {} \
         (use -timeout=N to change)\n",
        target_state::timeout_secs()
    ));
    headline(format_args!("timeout after {seconds} seconds"));
    crate::findings::symbolize::ruzzy_print_stack_trace();
    end(b"timeout-", "timeout", EXIT_TIMEOUT.load(Ordering::Relaxed))
}

/// The process holds more than `-rss_limit_mb` (found by the memory watch,
/// on its own thread).
pub fn out_of_memory(used_mb: u64, limit_mb: u64) -> ! {
    claim();
    headline(format_args!(
        "out-of-memory (used: {used_mb}Mb; exceeds: {limit_mb}Mb)\n   To change the out-of-memory \
         limit use -rss_limit_mb=<N>"
    ));
    crate::findings::reproduce::ruzzy_print_oom_reproduction();
    end(
        b"oom-",
        "out-of-memory",
        EXIT_OUT_OF_MEMORY.load(Ordering::Relaxed),
    )
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

/// `==PID== ERROR: libFuzzer: <what>`.
fn headline(what: std::fmt::Arguments) {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    write_stderr_fmt(format_args!("=={pid}== ERROR: libFuzzer: {what}\n"));
}

/// Writes the artifact of the input in progress, the summary and the
/// statistics, and ends the process with `status`.
fn end(kind: &[u8], summary: &str, status: i32) -> ! {
    if let Some(input) = target_state::input_in_progress() {
        crate::findings::reproduce::write_artifact(input, kind);
    }
    write_stderr(b"SUMMARY: libFuzzer: ");
    write_stderr(summary.as_bytes());
    write_stderr(b"\n");
    run_stats::print_final_stats();
    // SAFETY: _exit ends the process at once; the report is complete.
    unsafe { libc::_exit(status) }
}

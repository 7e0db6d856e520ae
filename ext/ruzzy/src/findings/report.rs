//! Reporting what went wrong with one input, then ending the process.
//!
//! A Ruby exception is a finding: it is described by `Ruzzy::Finding` (Ruby
//! code, so the format lives beside the rest of the reporting), its frames
//! are kept for libFuzzer's stack-trace printout ([`crate::findings::crash_frames`]),
//! then the process aborts. libFuzzer's SIGABRT handler takes over from there: it
//! writes the input as `crash-<sha1>` (honouring `-artifact_prefix` and
//! `-exact_artifact_path`), prints its summary and exits with
//! `-error_exitcode` (77 by default). Under LibAFL's runtime, whose crash
//! handling names artifacts its own way, `Ruzzy::Finding` writes the artifact
//! and the process exits with `Ruzzy::EXIT_FINDING` itself.
//!
//! Invariants: every report (`bad_return`, `harness_error`, and
//! `exception` outside a campaign) diverges; nothing here lets a Ruby exception escape (formatting and
//! `ignored?` run under `rb_protect`).

use crate::findings::FINDING;
use crate::rb;
use rb_sys::VALUE;
use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit status for harness contract violations: `Ruzzy::EXIT_USAGE`
/// (`lib/ruzzy/exit_status.rb`), read when the extension loads.
static EXIT_USAGE: AtomicI32 = AtomicI32::new(2);
/// Exit status for a finding: `Ruzzy::EXIT_FINDING`.
static EXIT_FINDING: AtomicI32 = AtomicI32::new(77);

/// Takes the exit statuses from `Ruzzy` (called once, at `require`).
pub fn configure(ruzzy: magnus::RModule) -> Result<(), magnus::Error> {
    use magnus::Module;
    EXIT_USAGE.store(ruzzy.const_get("EXIT_USAGE")?, Ordering::Relaxed);
    EXIT_FINDING.store(ruzzy.const_get("EXIT_FINDING")?, Ordering::Relaxed);
    Ok(())
}

/// Ends the process after a reported finding: libFuzzer's abort path, or
/// under LibAFL's runtime the finding's exit status (the artifact is
/// written).
fn end_with_finding() -> ! {
    if crate::process::libfuzzer::get().is_libafl() {
        crate::process::run_stats::print_final_stats();
        let _ = std::io::stderr().flush();
        // SAFETY: _exit ends the process at once; the report is printed and
        // the artifact written.
        unsafe { libc::_exit(EXIT_FINDING.load(Ordering::Relaxed)) }
    }
    std::process::abort()
}

fn exit_usage() -> ! {
    // SAFETY: _exit skips atexit handlers, in particular libFuzzer's, which
    // would otherwise report "fuzz target exited" as a crash.
    unsafe { libc::_exit(EXIT_USAGE.load(Ordering::Relaxed)) }
}

/// The target raised `error` (or left through another non-local exit) on
/// `input`. In a campaign (`ruzzy --keep-going`) `Ruzzy::Finding` records
/// the finding and answers nil: the input is rejected (-1) and fuzzing goes
/// on. Otherwise the process aborts.
pub fn exception(error: VALUE, input: &[u8]) -> std::ffi::c_int {
    crate::process::target_state::mark_reported();
    let described = rb::protect(|ruby| {
        let input = ruby.binary_string(input);
        ruby.call_class_method(FINDING, "report_exception", &[error, input])
    });
    match described {
        Ok(rb::QNIL) => {
            crate::process::target_state::clear_reported();
            return -1;
        }
        Ok(frames) => {
            // The report printed the commands that reproduce it.
            crate::findings::reproduce::mark_printed();
            crate::findings::crash_frames::keep_string(
                // SAFETY: on the fuzzing thread, holding the GVL; no Ruby
                // code runs while the returned String is read.
                unsafe { &rb::value::Frame::enter() },
                frames,
            )
        }
        Err(_) => fallback("report_exception"),
    }
    end_with_finding()
}

/// Registers [`flush_at_exit`] with `atexit`: libFuzzer ends a run that
/// reached `-runs` or `-max_total_time` with `exit`, where Ruby's own
/// `at_exit` blocks never run.
pub fn flush_findings_at_exit() {
    // SAFETY: registering a function with no arguments.
    unsafe { libc::atexit(flush_at_exit) };
}

/// Writes a campaign's unwritten finding counts (`Ruzzy::Finding.flush`),
/// when the process ends while libFuzzer runs on the fuzzing thread: then
/// the interpreter is still whole and this thread holds the GVL.
pub(crate) extern "C" fn flush_at_exit() {
    if crate::process::target_state::driver_running_here() {
        let _ = rb::protect(|ruby| ruby.call_class_method(FINDING, "flush", &[]));
    }
}

/// Whether `error` is an expected exception (`ignore:`). Any failure to
/// decide counts as "not ignored": the finding is reported.
pub fn ignored(error: VALUE) -> bool {
    let answer = rb::protect(|ruby| ruby.call_class_method(FINDING, "ignored?", &[error]));
    matches!(answer, Ok(value) if value == rb::value::QTRUE)
}

/// The target returned something other than `nil`, `0` or `-1`. This is a
/// bug in the harness, not in the code under test: no artifact is written.
pub fn bad_return(value: VALUE) -> ! {
    report("report_bad_return", value);
    exit_usage()
}

/// A custom mutator or crossover (`name`) `what`ed `value` (raised it, or
/// returned it instead of a String): a harness bug, reported like a bad
/// return value of the target.
pub fn harness_error(name: &str, what: &str, value: VALUE) -> ! {
    crate::process::target_state::mark_reported();
    let reported = rb::protect(|ruby| {
        let args = [ruby.utf8_string(name), ruby.utf8_string(what), value];
        ruby.call_class_method(FINDING, "report_harness_error", &args)
    });
    if reported.is_err() {
        fallback("report_harness_error");
    }
    exit_usage()
}

fn report(method: &str, value: VALUE) {
    let formatted = rb::protect(|ruby| ruby.call_class_method(FINDING, method, &[value]));
    if formatted.is_err() {
        fallback(method);
    }
}

fn fallback(method: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "==ruzzy== ERROR: the fuzz target failed and the failure could not be described \
         (Ruzzy::Finding.{method} raised)."
    );
}

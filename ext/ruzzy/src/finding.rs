//! Reporting what went wrong with one input, then ending the process.
//!
//! A Ruby exception is a finding: it is described by `Ruzzy::Finding` (Ruby
//! code, so the format lives beside the rest of the reporting), then the
//! process aborts. libFuzzer's SIGABRT handler takes over from there: it
//! writes the input as `crash-<sha1>` (honouring `-artifact_prefix` and
//! `-exact_artifact_path`), prints its summary and exits with
//! `-error_exitcode` (77 by default).
//!
//! Invariant: every function here diverges, and none of them lets a Ruby
//! exception escape (formatting runs under `rb_protect`).

use crate::rb;
use rb_sys::VALUE;
use std::io::Write;

/// Exit status for harness contract violations (see `Ruzzy::EXIT_USAGE`).
pub const EXIT_USAGE: i32 = 2;

/// The target raised `error` (or left through another non-local exit) on
/// `input`.
pub fn exception(error: VALUE, input: &[u8]) -> ! {
    crate::target_state::mark_reported();
    let described = rb::protect(|| {
        // SAFETY: we hold the GVL; rb_str_new copies the bytes; the class
        // lookup raises (caught) if it is missing; two arguments.
        unsafe {
            let input = rb_sys::rb_str_new(input.as_ptr().cast(), input.len() as _);
            let finding = rb_sys::rb_path2class(c"Ruzzy::Finding".as_ptr());
            let args = [error, input];
            rb_sys::rb_funcallv(finding, rb::intern(c"report_exception"), 2, args.as_ptr())
        }
    });
    if described.is_err() {
        fallback("report_exception");
    }
    std::process::abort()
}

/// Whether `error` is an expected exception (`ignore:`). Any failure to
/// decide counts as "not ignored": the finding is reported.
pub fn ignored(error: VALUE) -> bool {
    let answer = rb::protect(|| {
        // SAFETY: as above, one argument.
        unsafe {
            let finding = rb_sys::rb_path2class(c"Ruzzy::Finding".as_ptr());
            rb_sys::rb_funcallv(finding, rb::intern(c"ignored?"), 1, &error)
        }
    });
    matches!(answer, Ok(value) if value == rb_sys::Qtrue as VALUE)
}

/// The target returned something other than `nil`, `0` or `-1`. This is a
/// bug in the harness, not in the code under test: no artifact is written.
pub fn bad_return(value: VALUE) -> ! {
    report("report_bad_return", value);
    // SAFETY: _exit skips atexit handlers, in particular libFuzzer's, which
    // would otherwise report "fuzz target exited" as a crash.
    unsafe { libc::_exit(EXIT_USAGE) }
}

/// A custom mutator or crossover (`name`) `what`ed `value` (raised it, or
/// returned it instead of a String): a harness bug, reported like a bad
/// return value of the target.
pub fn harness_error(name: &str, what: &str, value: VALUE) -> ! {
    crate::target_state::mark_reported();
    let reported = rb::protect(|| {
        // SAFETY: we hold the GVL; Strings are created from Rust strings;
        // three arguments.
        unsafe {
            let finding = rb_sys::rb_path2class(c"Ruzzy::Finding".as_ptr());
            let args = [
                rb_sys::rb_utf8_str_new(name.as_ptr().cast(), name.len() as _),
                rb_sys::rb_utf8_str_new(what.as_ptr().cast(), what.len() as _),
                value,
            ];
            rb_sys::rb_funcallv(
                finding,
                rb::intern(c"report_harness_error"),
                3,
                args.as_ptr(),
            )
        }
    });
    if reported.is_err() {
        fallback("report_harness_error");
    }
    // SAFETY: see bad_return.
    unsafe { libc::_exit(EXIT_USAGE) }
}

/// A Rust panic inside ruzzy itself. The input is still saved.
pub fn internal_panic() -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "==ruzzy== ERROR: internal error in ruzzy's native code (a Rust panic). \
         Please report it with the crash file written below."
    );
    std::process::abort()
}

fn report(method: &str, value: VALUE) {
    let formatted = rb::protect(|| {
        // SAFETY: we hold the GVL; rb_path2class raises (caught by protect)
        // if the class is missing; the method takes one argument.
        unsafe {
            let finding = rb_sys::rb_path2class(c"Ruzzy::Finding".as_ptr());
            let id = rb_sys::rb_intern2(method.as_ptr().cast(), method.len() as _);
            rb_sys::rb_funcallv(finding, id, 1, &value)
        }
    });
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

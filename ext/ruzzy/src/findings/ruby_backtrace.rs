//! The Ruby backtrace of the running fuzz target, for reports made from
//! signal handlers (timeouts, deadly signals), where Ruby's own
//! `rb_backtrace` is not safe: it may allocate, and the signal may have
//! landed inside `malloc` or the garbage collector.
//!
//! Two ways, the safe one first:
//! - [`at_safe_point`]: Ruby runs a postponed job at its next interrupt
//!   check; the job prints the target's backtrace as Ruby has it, then
//!   finishes the report.
//!   Exact, but it needs the target to come back to Ruby.
//! - [`print_once`]: walks the interpreter's frames through
//!   [`crate::rb::interpreter_layout`], reading memory only, and writes with
//!   `write(2)`: async-signal-safe, for a target stuck in C code (a
//!   catastrophic regular expression on Ruby 3.1, a C extension) and for
//!   deadly signals. Nothing on a Ruby without a known layout.
//!
//! Invariant: nothing here allocates, takes a lock or calls Ruby, except
//! the postponed job, which runs where Ruby allows anything.

use crate::findings::frame_token::Token;
use crate::findings::RUBY_REPORT;
use crate::process::output::write_stderr;
use crate::process::target_state;
use crate::rb::value::Frame;
use crate::rb::{self, interpreter_layout};
use std::ffi::c_void;
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What runs after the job has printed the backtrace (set once).
static THEN: AtomicUsize = AtomicUsize::new(0);

/// The fuzzing thread answered [`print_on_fuzzing_thread`].
static ANSWERED: AtomicBool = AtomicBool::new(false);

/// The line above the running target's Ruby backtrace after a crash.
pub const BACKTRACE_HEADLINE: &str =
    "==ruzzy== Ruby backtrace of the fuzz target (innermost last):\n";

/// Prints the Ruby backtrace of the running target, once, if the target is
/// running on this thread, reading the frames without Ruby's help
/// (async-signal-safe); `in_report`: inside a sanitizer's report, which
/// names the finding itself (no `DEDUP_TOKEN:` line). Returns whether it
/// printed.
pub fn print_once(headline: &str, in_report: bool) -> bool {
    if !target_state::running_here() || !target_state::claim_report() {
        return false;
    }
    print_raw(headline, in_report);
    true
}

/// The Ruby backtrace of the fuzz target, inside a sanitizer's report
/// (which prints the finding's `DEDUP_TOKEN:` line itself); once per
/// process, and nothing when the target is not running on this thread.
/// Async-signal-safe.
pub fn print_in_report() {
    print_once(BACKTRACE_HEADLINE, true);
}

/// Prints `headline` and the Ruby frames of the fuzz target on this
/// thread, innermost last, as `rb_backtrace` would, then their
/// `DEDUP_TOKEN:` line ([`crate::findings::frame_token`]; never when
/// `in_report`: a sanitizer's report has its own). The frames are those
/// above `Ruzzy::Native._fuzz` (below it is the harness's start-up: the
/// `ruzzy` command, `Ruzzy.fuzz`), without ruzzy's own files, as
/// `Ruzzy::Findings::RubyFrames.target_frames` has them; all of them when the target is
/// ruzzy's own (`Ruzzy.dummy`). Returns whether any frame was found.
fn print_raw(headline: &str, in_report: bool) -> bool {
    write_stderr(headline.as_bytes());
    // SAFETY: called on the thread that runs the target (callers check),
    // whose frames are live while it is stopped in this handler.
    // No Ruby code runs while the target is stopped here.
    let strings = unsafe { Frame::enter() };
    let cut = target_state::fuzz_frame();
    let target = |frame: &interpreter_layout::StackFrame| cut == 0 || frame.cfp < cut;
    let own = |path: &[u8]| crate::findings::frame_token::own_file(path);
    let mut yours = 0;
    // SAFETY: as above.
    unsafe {
        interpreter_layout::each_ruby_frame(|frame| {
            let path = strings.string_bytes(frame.path).unwrap_or(b"?");
            if target(&frame) && !own(path) {
                yours += 1;
            }
        });
    }
    let mut printed = false;
    let mut token = Token::new();
    // SAFETY: as above.
    unsafe {
        interpreter_layout::each_ruby_frame(|frame| {
            let path = strings.string_bytes(frame.path).unwrap_or(b"?");
            if !target(&frame) || (yours > 0 && own(path)) {
                return;
            }
            let mut line = [0u8; 640];
            let mut cursor = Cursor::new(&mut line[..]);
            let label = strings.string_bytes(frame.label).unwrap_or(b"?");
            token.push(path, label);
            let number = rb::iseq_line(frame.iseq, frame.position);
            let _ = cursor
                .write_all(b"\tfrom ")
                .and_then(|_| cursor.write_all(&path[..path.len().min(400)]))
                .and_then(|_| write!(cursor, ":{number}:in '"))
                .and_then(|_| cursor.write_all(&label[..label.len().min(160)]))
                .and_then(|_| cursor.write_all(b"'\n"));
            let end = cursor.position() as usize;
            write_stderr(&line[..end]);
            printed = true;
        });
    }
    if !printed {
        write_stderr(b"\t(no Ruby frames could be read on this Ruby)\n");
    }
    token.finish(in_report);
    printed
}

/// From another thread (libFuzzer's memory watcher, which found the process
/// over `-rss_limit_mb`): has the fuzzing thread print its Ruby backtrace,
/// as after a crash, and waits for it up to a second. A real-time signal
/// interrupts the fuzzing thread; its handler does what a crash handler
/// does ([`print_once`]). Nothing when no input is
/// running.
pub fn print_on_fuzzing_thread() {
    extern "C" fn answer(_signal: libc::c_int) {
        print_once(BACKTRACE_HEADLINE, false);
        ANSWERED.store(true, Ordering::Release);
    }
    let Some(thread) = target_state::fuzzing_thread_in_target() else {
        return;
    };
    let signal = libc::SIGRTMIN() + 4;
    // SAFETY: installs a handler for a real-time signal nothing else in the
    // process uses, then sends it to the fuzzing thread (a live thread:
    // it is inside the target). Both calls are plain system calls.
    let sent = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = answer as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut()) == 0
            && libc::pthread_kill(thread, signal) == 0
    };
    for _ in 0..100 {
        if !sent || ANSWERED.load(Ordering::Acquire) {
            break;
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 10_000_000,
        };
        // SAFETY: sleeps on a valid timespec.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
}

/// Prints `headline` and the fuzz target's Ruby backtrace as Ruby has it
/// (exact lines; `Ruzzy::Findings::Report.current_backtrace`: the frames
/// [`print_once`] would print). Only at a safe point, never in a signal
/// handler.
pub fn print_exact(headline: &str) {
    write_stderr(headline.as_bytes());
    // Called from a postponed job, where Ruby may run anything.
    let backtrace =
        rb::protect(|ruby| ruby.call_class_method(RUBY_REPORT, "current_backtrace", &[]));
    match backtrace {
        Ok(text) => {
            // SAFETY: at Ruby's safe point on the fuzzing thread, holding
            // the GVL; no Ruby code runs while the String is read.
            let frame = unsafe { Frame::enter() };
            write_stderr(frame.string_bytes(text).unwrap_or_default());
        }
        Err(_) => {
            let _ = rb::protect(|ruby| {
                ruby.print_backtrace();
                rb::QNIL
            });
        }
    }
}

/// Asks Ruby to run `then` at its next safe point (see [`print_exact`]).
/// Async-signal-safe. Returns false when the job could not be registered.
pub fn at_safe_point(then: fn()) -> bool {
    THEN.store(then as usize, Ordering::Relaxed);
    rb::run_at_safe_point(job)
}

unsafe extern "C" fn job(_data: *mut c_void) {
    let then = THEN.load(Ordering::Relaxed);
    if then != 0 {
        // SAFETY: THEN only ever holds a `fn()` stored by `at_safe_point`.
        let then: fn() = unsafe { std::mem::transmute(then) };
        then();
    }
}

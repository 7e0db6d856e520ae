//! The frames of a Ruby exception finding, printed where crash-grouping
//! tools look for them.
//!
//! ClusterFuzz (OSS-Fuzz, ClusterFuzzLite) names a crash by its type and
//! top frames, read from the sanitizer-style frames (`#0 0x... in f
//! file:line`) that follow the crash line. For an uncaught Ruby exception
//! the crash line is libFuzzer's `deadly signal` (the process aborts after
//! the report), and the frames after it are whatever
//! `__sanitizer_print_stack_trace` prints: native frames of the
//! interpreter, the same for every Ruby bug. So `Ruzzy::Findings::Report` formats
//! the exception's Ruby frames in that form, they are kept here before the
//! abort, and the stack-trace printer writes them instead: ruzzy's own
//! printer in a pure-Ruby run, and the sanitizer preloads' wrapper
//! (registered through `ruzzy_preload_set_frame_printer`) when one is
//! loaded.
//!
//! Timeouts take the same way: the frames of the target, read at Ruby's
//! safe point after the alarm, follow libFuzzer's `timeout` line.
//!
//! Invariants: [`print`] runs in a signal handler: it only reads a static
//! buffer and calls `write(2)`. [`keep`] runs once, on the fuzzing thread,
//! before the abort; the buffer is never written again.

use crate::findings::ruby_backtrace::{self, BACKTRACE_HEADLINE};
use crate::findings::RUBY_REPORT;
use crate::process::output::write_stderr;
use crate::rb::{self, dl, value::Frame, value::QFALSE};
use std::cell::UnsafeCell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

const CAPACITY: usize = 16 * 1024;

struct Buffer(UnsafeCell<[u8; CAPACITY]>);

// SAFETY: written once by `keep` before LENGTH is published (release),
// read only after LENGTH is seen non-zero (acquire).
unsafe impl Sync for Buffer {}

static FRAMES: Buffer = Buffer(UnsafeCell::new([0; CAPACITY]));
static LENGTH: AtomicUsize = AtomicUsize::new(0);

/// Keeps `frames` (already formatted) for [`print`]; the first call wins,
/// text beyond the buffer is cut at a line end.
pub fn keep(frames: &[u8]) {
    if LENGTH.load(Ordering::Acquire) != 0 || frames.is_empty() {
        return;
    }
    let length = fitting(frames, CAPACITY);
    // SAFETY: nothing reads the buffer while LENGTH is 0, and only this
    // thread writes it (once).
    unsafe { (&mut *FRAMES.0.get())[..length].copy_from_slice(&frames[..length]) };
    LENGTH.store(length, Ordering::Release);
}

/// Test only: no frames kept (see [`crate::findings::reset_for_tests`]).
#[cfg(test)]
pub(super) fn reset_for_tests() {
    LENGTH.store(0, Ordering::Release);
}

/// Keeps the running target's Ruby frames, formatted by
/// `Ruzzy::Findings::Report.current_frames` (a timeout, at Ruby's safe point: Ruby
/// code may run there). Nothing is kept if formatting fails.
pub fn keep_current() {
    let frames = rb::protect(|ruby| ruby.call_class_method(RUBY_REPORT, "current_frames", &[]));
    if let Ok(frames) = frames {
        // SAFETY: at Ruby's safe point on the fuzzing thread, holding the
        // GVL; no Ruby code runs while the String is read.
        keep_string(unsafe { &Frame::enter() }, frames);
    }
}

/// Whether the running target's hang can be named now (a timeout, at
/// Ruby's safe point: Ruby code may run there):
/// `Ruzzy::Findings::Report.hang_followed?` says no, once per input, when
/// the hang watch had not followed the input (its thread got no turn: a C
/// call holding Ruby's lock, a busy machine); it follows it from then on,
/// and the report waits for the next alarm. Yes when asking fails.
pub fn hang_followed() -> bool {
    rb::protect(|ruby| ruby.call_class_method(RUBY_REPORT, "hang_followed?", &[])) != Ok(QFALSE)
}

/// Keeps the frames in the Ruby String `frames` (anything else keeps none).
pub fn keep_string(frame: &Frame, frames: rb_sys::VALUE) {
    keep(frame.string_bytes(frames).unwrap_or_default());
}

/// How much of `frames` fits in `capacity` bytes, ending at a line end.
fn fitting(frames: &[u8], capacity: usize) -> usize {
    if frames.len() <= capacity {
        return frames.len();
    }
    frames[..capacity]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Writes the kept frames to standard error; false when there are none.
/// Async-signal-safe.
pub fn print() -> bool {
    let length = LENGTH.load(Ordering::Acquire);
    if length == 0 {
        return false;
    }
    // SAFETY: published by `keep`, never written again.
    write_stderr(unsafe { &(&*FRAMES.0.get())[..length] });
    true
}

/// The preload's printer: the kept frames instead of the native stack, or
/// (a native crash) the running target's Ruby backtrace before it.
extern "C" fn print_for_preload() -> c_int {
    if print() {
        crate::findings::reproduce::print();
        return 1;
    }
    ruby_backtrace::print_once(BACKTRACE_HEADLINE, false);
    crate::findings::reproduce::print();
    0
}

/// A sanitizer's report starts (`__asan_on_error`, `__ubsan_on_report` in
/// a preload built by ruzzy): the Ruby backtrace of the fuzz target goes
/// above it. Async-signal-safe.
extern "C" fn report_starts() {
    ruby_backtrace::print_in_report();
}

/// Hands [`print_for_preload`] to a sanitizer preload built by ruzzy, whose
/// libFuzzer then prints the kept frames instead of the native stack, and
/// the Ruby backtrace above the native stack of a crash in C code. A
/// preload without the hook (an older build, another tool's) keeps
/// printing native frames only.
pub fn register_with_preload() {
    type SetPrinter = unsafe extern "C" fn(extern "C" fn() -> c_int);
    if let Some(set) = dl::lookup(c"ruzzy_preload_set_frame_printer") {
        // SAFETY: the preload defines this symbol with exactly this
        // signature (lib/ruzzy/sanitizers/preload_frames.c).
        let set: SetPrinter = unsafe { std::mem::transmute(set) };
        // SAFETY: a plain store of a function pointer that lives as long
        // as the process.
        unsafe { set(print_for_preload) };
    }
    type SetHook = unsafe extern "C" fn(extern "C" fn());
    if let Some(set) = dl::lookup(c"ruzzy_preload_set_report_start") {
        // SAFETY: as above (preload_frames.c).
        let set: SetHook = unsafe { std::mem::transmute(set) };
        // SAFETY: as above.
        unsafe { set(report_starts) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_frames_are_kept_and_later_ones_ignored() {
        let _process = crate::findings::reset_for_tests();
        keep(b"    #0 0x0 in a /x.rb:1\n");
        keep(b"    #0 0x0 in b /y.rb:2\n");
        let length = LENGTH.load(Ordering::Acquire);
        // SAFETY: published above.
        let kept = unsafe { &(&*FRAMES.0.get())[..length] };
        assert_eq!(kept, b"    #0 0x0 in a /x.rb:1\n");
    }

    #[test]
    fn frames_longer_than_the_buffer_are_kept_up_to_a_line_end() {
        let _process = crate::findings::reset_for_tests();
        let line = b"    #0 0x0 in parse /lib/parser.rb:12\n";
        let frames = line.repeat(CAPACITY / line.len() + 1);
        keep(&frames);
        let length = LENGTH.load(Ordering::Acquire);
        assert_eq!(length, CAPACITY / line.len() * line.len());
    }

    #[test]
    fn frames_too_long_are_cut_at_a_line_end() {
        assert_eq!(fitting(b"#0 a\n#1 b\n", 7), 5);
        assert_eq!(fitting(b"#0 a\n#1 b\n", 10), 10);
        assert_eq!(fitting(b"#0 aaaa\n", 3), 0);
    }
}

//! The `DEDUP_TOKEN:` line of a Ruby backtrace read without Ruby's help
//! (a segfault or a hang in C code, reported from a signal handler) when no
//! sanitizer prints one after it: the identity a crash-grouping tool and
//! `ruzzy --keep-going` give the finding.
//!
//! No Ruby code may run here, so the naming rule of the Ruby side
//! (`Ruzzy::Findings::RubyFrames.sanitizer_frames` and `Ruzzy::Findings::Identity`: the
//! innermost `Findings::Report::DEDUP_FRAMES` frames of the fuzz target,
//! `method@file`, Ruby's `block in` decorations and `<internal:` frames left
//! out, the top level of a file as `<top>`, sanitizer-form escapes) is applied to the raw frames here;
//! test_faults.rb checks that both sides name a hang in C code alike. Not
//! applied here: the Ruby side's each-method-once rule for a recursion
//! (`Findings::RubyFrames.without_recursion`); a campaign groups by the Ruby side's
//! reading of the printed backtrace, which applies it.
//!
//! When a native stack trace follows (a sanitizer preload's), the line is
//! kept instead ([`print_kept`]): the preload prints it only when no frame
//! of that stack is the target's.
//!
//! Invariants: [`Token`] lives on the stack and is filled and written
//! without allocating or locking (async-signal-safe); the kept line is
//! written once per process (one report), before it is read. The
//! configuration is set once, before fuzzing starts.

use crate::process::output::write_stderr;
use crate::rb::dl;
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The longest token line.
const LINE: usize = 1024;

struct Kept(UnsafeCell<[u8; LINE]>);

// SAFETY: written once by `Token::finish` before KEPT_LENGTH is published
// (release), read only after it is seen non-zero (acquire).
unsafe impl Sync for Kept {}

static KEPT: Kept = Kept(UnsafeCell::new([0; LINE]));
static KEPT_LENGTH: AtomicUsize = AtomicUsize::new(0);

/// Most frames a token can hold; it holds `Ruzzy::Findings::Report::DEDUP_FRAMES`
/// (the sanitizers' `dedup_token_length` of OSS-Fuzz), given to
/// [`configure`].
const MAX_FRAMES: usize = 8;

/// Frames in a token (3 until configured).
static FRAMES: AtomicUsize = AtomicUsize::new(3);

/// ruzzy's own Ruby files start with this (`Ruzzy::OWN_FILES`).
static OWN_FILES: OnceLock<Box<[u8]>> = OnceLock::new();
/// A sanitizer's stack trace, with its own token, follows ours.
static SANITIZER_TOKEN_FOLLOWS: AtomicBool = AtomicBool::new(false);

/// Whether `path` is one of ruzzy's own Ruby files.
pub fn own_file(path: &[u8]) -> bool {
    OWN_FILES.get().is_some_and(|own| path.starts_with(own))
}

/// The frames of a token (configured).
pub fn frames() -> usize {
    FRAMES.load(Ordering::Relaxed)
}

/// Set once before fuzzing; `frames` is clamped to 1..=[`MAX_FRAMES`].
pub fn configure(own_files: &[u8], sanitizer_token_follows: bool, frames: usize) {
    let _ = OWN_FILES.set(own_files.into());
    FRAMES.store(frames.clamp(1, MAX_FRAMES), Ordering::Relaxed);
    SANITIZER_TOKEN_FOLLOWS.store(sanitizer_token_follows, Ordering::Relaxed);
}

/// Tells a sanitizer preload built by ruzzy, whose libFuzzer prints the
/// native stack of a crash or hang in C code from the interrupted frame,
/// which code is the runtime's (never named in a `DEDUP_TOKEN:`): ruzzy's
/// extension, the Ruby interpreter, libc (the preload adds itself); how
/// many frames a token holds ([`frames`]); and that the token of the Ruby
/// frames ([`print_kept`]) stands in when none of the native frames is the
/// target's. Called once, before fuzzing, after [`configure`].
pub fn register_native_stack() {
    type SetNativeStack = unsafe extern "C" fn(*const *const c_void, c_int, c_int, extern "C" fn());
    let Some(set) = dl::lookup(c"ruzzy_preload_set_native_stack") else {
        return;
    };
    // One address in each: ruzzy's extension, the interpreter, libc.
    let runtime: [*const c_void; 3] = [
        print_kept as *const c_void,
        dl::interpreter_code(),
        libc::getpid as *const c_void,
    ];
    // SAFETY: the preload defines this symbol with exactly this signature
    // (preload_frames.c); it reads the addresses during the call.
    let set: SetNativeStack = unsafe { std::mem::transmute(set) };
    // SAFETY: as above; the function pointer lives as long as the process.
    unsafe {
        set(
            runtime.as_ptr(),
            runtime.len() as c_int,
            frames() as c_int,
            print_kept,
        )
    };
}

/// The innermost fuzz-target frames seen so far, fed outermost first.
pub struct Token<'a> {
    frames: [(&'a [u8], &'a [u8]); MAX_FRAMES],
    /// Slots in use (the configured number of frames).
    size: usize,
    count: usize,
}

impl<'a> Token<'a> {
    pub fn new() -> Self {
        Token {
            frames: [(b"", b""); MAX_FRAMES],
            size: FRAMES.load(Ordering::Relaxed),
            count: 0,
        }
    }

    /// Takes the next frame inward: its source path and label. A frame of
    /// ruzzy's own files starts over (the target's frames come after them).
    pub fn push(&mut self, path: &'a [u8], label: &'a [u8]) {
        if own_file(path) {
            self.count = 0;
            return;
        }
        if path.starts_with(b"<internal:") {
            return;
        }
        self.frames[self.count % self.size] = (path, label);
        self.count += 1;
    }

    /// Ends the Ruby backtrace: writes `DEDUP_TOKEN: method@file--...`,
    /// innermost first, unless there are no frames, a sanitizer's stack
    /// trace with its own token follows, or `in_report` (the backtrace is
    /// part of a sanitizer's report, which has a token); keeps it for
    /// [`print_kept`] either way.
    pub fn finish(&self, in_report: bool) {
        if self.count == 0 {
            return;
        }
        let mut line = [0u8; LINE];
        let end = self.render(&mut line);
        if KEPT_LENGTH.load(Ordering::Acquire) == 0 {
            // SAFETY: one report per process: nothing reads the buffer
            // while KEPT_LENGTH is 0, and only this report writes it.
            unsafe { (&mut *KEPT.0.get())[..end].copy_from_slice(&line[..end]) };
            KEPT_LENGTH.store(end, Ordering::Release);
        }
        if !in_report && !SANITIZER_TOKEN_FOLLOWS.load(Ordering::Relaxed) {
            write_stderr(&line[..end]);
        }
    }

    /// Writes the token line into `line`; returns its length.
    fn render(&self, line: &mut [u8; LINE]) -> usize {
        let mut cursor = Cursor::new(&mut line[..]);
        let _ = cursor.write_all(b"DEDUP_TOKEN: ");
        for index in 0..self.count.min(self.size) {
            let (path, label) = self.frames[(self.count - 1 - index) % self.size];
            if index > 0 {
                let _ = cursor.write_all(b"--");
            }
            write_escaped(&mut cursor, method_label(&label[..label.len().min(160)]));
            let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
            let _ = cursor
                .write_all(b"@")
                .and_then(|_| cursor.write_all(&base[..base.len().min(160)]));
        }
        let _ = cursor.write_all(b"\n");
        cursor.position() as usize
    }
}

/// Writes the token line of the last Ruby backtrace printed, if any: a
/// sanitizer preload's native stack trace found none of the target's
/// frames in its native frames. Async-signal-safe.
pub extern "C" fn print_kept() {
    let length = KEPT_LENGTH.load(Ordering::Acquire);
    if length > 0 {
        // SAFETY: published by `Token::finish`, never written again.
        write_stderr(unsafe { &(&*KEPT.0.get())[..length] });
    }
}

/// The method a label names: without `block in`, `block (2 levels) in`,
/// `rescue in`, `ensure in`; a file's top level is `<top>`.
fn method_label(mut label: &[u8]) -> &[u8] {
    while let Some(rest) = [&b"block"[..], b"rescue", b"ensure"]
        .iter()
        .find_map(|word| label.strip_prefix(*word))
    {
        let rest = match rest.strip_prefix(b" (") {
            Some(levels) => match levels.iter().position(|&b| b == b')') {
                Some(close) => &levels[close + 1..],
                None => break,
            },
            None => rest,
        };
        match rest.strip_prefix(b" in ") {
            Some(inner) => label = inner,
            None => break,
        }
    }
    if label == b"<main>" || label == b"<top (required)>" {
        b"<top>"
    } else {
        label
    }
}

/// Writes `name` with the characters that end a name in a sanitizer frame
/// (white space, `!()[]%`) as `%XX`.
fn write_escaped(cursor: &mut Cursor<&mut [u8]>, name: &[u8]) {
    for &byte in name {
        let _ = if byte.is_ascii_whitespace() || b"!()[]%".contains(&byte) {
            write!(cursor, "%{byte:02X}")
        } else {
            cursor.write_all(&[byte])
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_lose_ruby_decorations() {
        assert_eq!(method_label(b"block in stuck"), b"stuck");
        assert_eq!(
            method_label(b"block (2 levels) in rescue in parse"),
            b"parse"
        );
        assert_eq!(method_label(b"block in <top (required)>"), b"<top>");
        assert_eq!(method_label(b"<main>"), b"<top>");
        assert_eq!(method_label(b"blocked"), b"blocked");
        assert_eq!(method_label(b"block (2 levels"), b"block (2 levels");
    }

    #[test]
    fn names_are_escaped_as_sanitizer_frames_are() {
        let mut buffer = [0u8; 32];
        let mut cursor = Cursor::new(&mut buffer[..]);
        write_escaped(&mut cursor, b"save! [x]");
        let end = cursor.position() as usize;
        assert_eq!(&buffer[..end], b"save%21%20%5Bx%5D");
    }
}

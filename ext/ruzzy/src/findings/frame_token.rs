//! The `DEDUP_TOKEN:` line of a Ruby backtrace read without Ruby's help
//! (a segfault or a hang in C code, reported from a signal handler) when no
//! sanitizer prints one after it: the identity a crash-grouping tool and
//! `ruzzy --keep-going` give the finding.
//!
//! No Ruby code may run here, so the naming rule of the Ruby side
//! (`Ruzzy::Finding.sanitizer_frames` and `Ruzzy::Findings::Identity`: the
//! innermost `Finding::DEDUP_FRAMES` frames of the fuzz target,
//! `method@file`, Ruby's `block in` decorations and `<internal:` frames left
//! out, the top level of a file as `<top>`, sanitizer-form escapes) is applied to the raw frames here;
//! test_faults.rb checks that both sides name a hang in C code alike.
//!
//! Invariants: [`Token`] lives on the stack and is filled and written
//! without allocating or locking (async-signal-safe). The configuration is
//! set once, before fuzzing starts.

use crate::findings::ruby_backtrace::write_stderr;
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Most frames a token can hold; it holds `Ruzzy::Finding::DEDUP_FRAMES`
/// (the sanitizers' `dedup_token_length` of OSS-Fuzz), given to
/// [`configure`].
const MAX_FRAMES: usize = 8;

/// Frames in a token (3 until configured).
static FRAMES: AtomicUsize = AtomicUsize::new(3);

/// ruzzy's own Ruby files start with this (`Ruzzy::OWN_FILES`).
static OWN_FILES: OnceLock<Box<[u8]>> = OnceLock::new();
/// A sanitizer's stack trace, with its own token, follows ours.
static SANITIZER_TOKEN_FOLLOWS: AtomicBool = AtomicBool::new(false);

/// Set once before fuzzing; `frames` is clamped to 1..=[`MAX_FRAMES`].
pub fn configure(own_files: &[u8], sanitizer_token_follows: bool, frames: usize) {
    let _ = OWN_FILES.set(own_files.into());
    FRAMES.store(frames.clamp(1, MAX_FRAMES), Ordering::Relaxed);
    SANITIZER_TOKEN_FOLLOWS.store(sanitizer_token_follows, Ordering::Relaxed);
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
        if OWN_FILES.get().is_some_and(|own| path.starts_with(own)) {
            self.count = 0;
            return;
        }
        if path.starts_with(b"<internal:") {
            return;
        }
        self.frames[self.count % self.size] = (path, label);
        self.count += 1;
    }

    /// Writes `DEDUP_TOKEN: method@file--...`, innermost first, unless a
    /// sanitizer prints its own or there are no frames.
    pub fn print(&self) {
        if self.count == 0 || SANITIZER_TOKEN_FOLLOWS.load(Ordering::Relaxed) {
            return;
        }
        let mut line = [0u8; 1024];
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
        let end = cursor.position() as usize;
        write_stderr(&line[..end]);
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

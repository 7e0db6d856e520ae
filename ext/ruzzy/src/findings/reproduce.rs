//! The `Reproduce:` and `Minimise:` lines of a finding that ends the
//! process in native code: a segfault, a timeout, a sanitizer report.
//!
//! A Ruby exception's report prints them from Ruby (`Ruzzy::Finding`).
//! These findings are reported from signal handlers and sanitizer
//! callbacks, where no Ruby code may run: the command line, the artifact
//! prefix and the input files given on the command line are handed over
//! once before fuzzing starts ([`configure`]), and the lines are written
//! with `write(2)` from the input that is running, whose SHA-1 names the
//! artifact libFuzzer writes (`<prefix>crash-<sha1>`, `timeout-<sha1>`).
//!
//! Invariants: [`print`] is async-signal-safe: it reads data published
//! before the driver started, hashes the input on the stack and calls
//! `write(2)`; it prints at most once per process.

use crate::engine::target_state;
use crate::findings::ruby_backtrace::write_stderr;
use magnus::{Error, RArray, RString, TryConvert};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// What the lines are made of, set once before fuzzing.
struct Reproduction {
    /// The shell command that starts the harness again.
    command: Box<[u8]>,
    /// `-artifact_prefix` (or "./").
    prefix: Box<[u8]>,
    /// `-exact_artifact_path`, if given.
    exact: Option<Box<[u8]>>,
    /// Input files on the command line, by the SHA-1 of their contents:
    /// a replayed file is named as it is (libFuzzer writes no artifact).
    files: Box<[ReplayedFile]>,
}

/// An input file given on the command line: the SHA-1 of its contents and
/// its path (shell-escaped).
type ReplayedFile = ([u8; 20], Box<[u8]>);

static REPRODUCTION: OnceLock<Reproduction> = OnceLock::new();
static PRINTED: AtomicBool = AtomicBool::new(false);

/// `Ruzzy::Native._configure_reproduction(command, prefix, exact, files,
/// own_files, dedup_frames)`: `files` is an Array of [sha1 hex, path];
/// `own_files` what ruzzy's Ruby files start with and `dedup_frames` the
/// frames of a finding's token (for [`crate::findings::frame_token`]).
/// Only the first call counts.
pub fn configure(
    command: RString,
    prefix: RString,
    exact: Option<RString>,
    files: RArray,
    own_files: RString,
    dedup_frames: usize,
) -> Result<(), Error> {
    let preloaded = matches!(
        crate::engine::libfuzzer::get().origin,
        crate::engine::libfuzzer::Origin::Preloaded { .. }
    );
    crate::findings::frame_token::configure(&bytes(own_files), preloaded, dedup_frames);
    let mut inputs = Vec::with_capacity(files.len());
    for pair in files {
        let pair = RArray::try_convert(pair)?;
        let sha1: RString = pair.entry(0)?;
        let path: RString = pair.entry(1)?;
        if let Some(digest) = parse_hex(&sha1.to_string()?) {
            inputs.push((digest, bytes(path)));
        }
    }
    let _ = REPRODUCTION.set(Reproduction {
        command: bytes(command),
        prefix: bytes(prefix),
        exact: exact.map(bytes),
        files: inputs.into_boxed_slice(),
    });
    Ok(())
}

fn bytes(string: RString) -> Box<[u8]> {
    // SAFETY: copied at once, before any Ruby code runs.
    unsafe { string.as_slice() }.into()
}

fn parse_hex(text: &str) -> Option<[u8; 20]> {
    let text = text.as_bytes();
    if text.len() != 40 {
        return None;
    }
    let mut digest = [0u8; 20];
    for (index, byte) in digest.iter_mut().enumerate() {
        let pair = std::str::from_utf8(&text[index * 2..index * 2 + 2]).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(digest)
}

/// Prints the lines for the input running on this thread, once: the
/// artifact is a `timeout-` one when the input ran past `-timeout`, else a
/// `crash-` one. Nothing when no input is running or nothing was
/// configured.
pub fn print() {
    let kind: &[u8] = if target_state::timed_out() {
        b"timeout-"
    } else {
        b"crash-"
    };
    if let Some(input) = target_state::current_input() {
        print_for(input, kind);
    }
}

/// libFuzzer's memory watcher found the process over `-rss_limit_mb`
/// (on its own thread) and writes `oom-<sha1>` next: the running target's
/// Ruby backtrace (with its `DEDUP_TOKEN:` line), then the commands.
#[no_mangle]
pub extern "C" fn ruzzy_print_oom_reproduction() {
    crate::findings::ruby_backtrace::print_on_fuzzing_thread();
    if let Some(input) = target_state::input_in_progress() {
        print_for(input, b"oom-");
    }
}

fn print_for(input: &[u8], kind: &[u8]) {
    let Some(reproduction) = REPRODUCTION.get() else {
        return;
    };
    if PRINTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let digest = sha1_smol::Sha1::from(input).digest().bytes();
    let mut hex = [0u8; 40];
    to_hex(&digest, &mut hex);
    let replayed = reproduction
        .files
        .iter()
        .find(|(sha1, _)| *sha1 == digest)
        .map(|(_, path)| &path[..]);
    let artifact: [&[u8]; 3] = match (replayed, &reproduction.exact) {
        (Some(path), _) => [path, b"", b""],
        (None, Some(exact)) => [exact, b"", b""],
        (None, None) => [&reproduction.prefix, kind, &hex],
    };
    let flags: &[u8] = if kind == b"timeout-" {
        b" -minimize_crash=1 -runs=100000 -timeout=5 "
    } else {
        b" -minimize_crash=1 -runs=100000 "
    };
    for (label, middle) in [
        (&b"==ruzzy== Reproduce: "[..], &b" "[..]),
        (&b"==ruzzy== Minimise:  "[..], flags),
    ] {
        write_stderr(label);
        write_stderr(&reproduction.command);
        write_stderr(middle);
        for part in artifact {
            write_stderr(part);
        }
        write_stderr(b"\n");
    }
}

fn to_hex(digest: &[u8; 20], out: &mut [u8; 40]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (index, byte) in digest.iter().enumerate() {
        out[index * 2] = DIGITS[usize::from(byte >> 4)];
        out[index * 2 + 1] = DIGITS[usize::from(byte & 15)];
    }
}

/// The finding's report printed the lines itself (a Ruby exception):
/// [`print`] prints nothing.
pub fn mark_printed() {
    PRINTED.store(true, Ordering::Relaxed);
}

/// AddressSanitizer's error report callback: the report is complete, the
/// process is about to die.
extern "C" fn after_asan_report(_report: *const std::ffi::c_char) {
    print();
}

/// Registers [`after_asan_report`] with a preloaded AddressSanitizer.
pub fn register_with_asan() {
    type SetCallback = unsafe extern "C" fn(extern "C" fn(*const std::ffi::c_char));
    if let Some(set) = crate::rb::dl::lookup(c"__asan_set_error_report_callback") {
        // SAFETY: AddressSanitizer's public interface declares exactly this
        // signature (sanitizer/asan_interface.h).
        let set: SetCallback = unsafe { std::mem::transmute(set) };
        // SAFETY: stores a function pointer that lives as long as the process.
        unsafe { set(after_asan_report) };
    }
}

/// Runs before libFuzzer's death callback in a sanitizer preload built by
/// ruzzy: a sanitizer report that ends the process (UBSan's, which has no
/// report callback; ASan's was printed already, and [`print`] prints once).
extern "C" fn before_death() {
    print();
}

/// Registers [`before_death`] with a sanitizer preload built by ruzzy (an
/// older build, or another tool's, has no such hook: nothing happens).
pub fn register_with_preload() {
    type SetCallback = unsafe extern "C" fn(extern "C" fn());
    if let Some(set) = crate::rb::dl::lookup(c"ruzzy_preload_set_before_death") {
        // SAFETY: the preload defines this symbol with exactly this
        // signature (lib/ruzzy/sanitizers/preload_frames.c).
        let set: SetCallback = unsafe { std::mem::transmute(set) };
        // SAFETY: stores a function pointer that lives as long as the process.
        unsafe { set(before_death) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let digest = sha1_smol::Sha1::from(b"HI").digest().bytes();
        let mut hex = [0u8; 40];
        to_hex(&digest, &mut hex);
        assert_eq!(parse_hex(std::str::from_utf8(&hex).unwrap()), Some(digest));
        assert_eq!(
            std::str::from_utf8(&hex).unwrap(),
            sha1_smol::Sha1::from(b"HI").digest().to_string()
        );
        assert_eq!(parse_hex("zz"), None);
    }
}

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

use crate::finding_kind::FindingKind;
use crate::process::output::{write_fd, write_stderr};
use crate::process::target_state;
use magnus::{Error, RArray, RString, TryConvert};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// What the lines are made of, set once before fuzzing.
struct Reproduction {
    /// The shell command that starts the harness again.
    command: Box<[u8]>,
    /// The one that minimises a finding (on the libfuzzer engine).
    minimise: Box<[u8]>,
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

/// `Ruzzy::Native._configure_reproduction(command, minimise, prefix,
/// exact, files, own_files, dedup_frames)`: `files` is an Array of
/// [sha1 hex, path];
/// `own_files` what ruzzy's Ruby files start with and `dedup_frames` the
/// frames of a finding's token (for [`crate::findings::frame_token`]).
/// Only the first call counts.
pub fn configure(
    command: RString,
    minimise: RString,
    prefix: RString,
    exact: Option<RString>,
    files: RArray,
    own_files: RString,
    dedup_frames: usize,
) -> Result<(), Error> {
    // A sanitizer preload's own stack trace prints a token; LibAFL's
    // runtime prints none.
    let engine = crate::process::libfuzzer::get();
    let sanitizer_token_follows = !engine.is_libafl()
        && matches!(
            engine.origin,
            crate::process::libfuzzer::Origin::Preloaded { .. }
        );
    crate::findings::frame_token::configure(
        &bytes(own_files),
        sanitizer_token_follows,
        dedup_frames,
    );
    crate::findings::frame_token::register_native_stack();
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
        minimise: bytes(minimise),
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
/// artifact is a `timeout-` one when libFuzzer reports a timeout, else a
/// `crash-` one. Nothing when no input is running or nothing was
/// configured.
pub fn print() {
    let kind = if target_state::reporting_timeout() {
        FindingKind::Timeout
    } else {
        FindingKind::Crash
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
        print_for(input, FindingKind::OutOfMemory);
    }
}

/// Where the artifact of `input` (named `kind`'s prefix + its SHA-1) is: the file
/// given on the command line that holds it, `-exact_artifact_path`, or
/// `<prefix><kind><sha1>` (the parts to concatenate, the last in `hex`);
/// whether the input is such a file. None when nothing was configured.
fn artifact_of<'a>(
    input: &[u8],
    kind: FindingKind,
    hex: &'a mut [u8; 40],
) -> Option<([&'a [u8]; 3], bool)> {
    let reproduction = REPRODUCTION.get()?;
    let digest = sha1_smol::Sha1::from(input).digest().bytes();
    to_hex(&digest, hex);
    let replayed = reproduction
        .files
        .iter()
        .find(|(sha1, _)| *sha1 == digest)
        .map(|(_, path)| &path[..]);
    Some(match (replayed, &reproduction.exact) {
        (Some(path), _) => ([path, b"", b""], true),
        (None, Some(exact)) => ([exact, b"", b""], false),
        (None, None) => ([&reproduction.prefix, kind.prefix(), &hex[..]], false),
    })
}

fn print_for(input: &[u8], kind: FindingKind) {
    let Some(reproduction) = REPRODUCTION.get() else {
        return;
    };
    if PRINTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut hex = [0u8; 40];
    let Some((artifact, _)) = artifact_of(input, kind, &mut hex) else {
        return;
    };
    let flags: &[u8] = if kind == FindingKind::Timeout {
        b" -minimize_crash=1 -runs=100000 -timeout=5 "
    } else {
        b" -minimize_crash=1 -runs=100000 "
    };
    for (label, command, middle) in [
        (
            &b"==ruzzy== Reproduce: "[..],
            &reproduction.command,
            &b" "[..],
        ),
        (&b"==ruzzy== Minimise:  "[..], &reproduction.minimise, flags),
    ] {
        write_stderr(label);
        write_stderr(command);
        write_stderr(middle);
        for part in artifact {
            write_stderr(part);
        }
        write_stderr(b"\n");
    }
}

/// Writes `input` where libFuzzer would write its artifact of `kind`
/// (`crash-<sha1>`, `timeout-<sha1>`...), for an engine that does not, and says
/// so; nothing for an input file given on the command line (it is the
/// artifact). Async-signal-safe: the path is assembled on the stack and
/// written with open(2)/write(2).
pub fn write_artifact(input: &[u8], kind: FindingKind) {
    let mut hex = [0u8; 40];
    let Some((parts, false)) = artifact_of(input, kind, &mut hex) else {
        return;
    };
    let mut path = [0u8; 4096];
    let len: usize = parts.iter().map(|part| part.len()).sum();
    if len >= path.len() {
        write_stderr(b"==ruzzy== ERROR: the artifact path is too long; the input is not written\n");
        return;
    }
    let mut end = 0;
    for part in parts {
        path[end..end + part.len()].copy_from_slice(part);
        end += part.len();
    }
    // SAFETY: `path` is NUL-terminated (zeroed past `len`); open, write
    // and close are async-signal-safe system calls on our own buffers.
    let written = unsafe {
        let fd = libc::open(
            path.as_ptr().cast(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        );
        fd >= 0 && write_fd(fd, input) & (libc::close(fd) == 0)
    };
    write_stderr(if written {
        b"==ruzzy== Test unit written to "
    } else {
        b"==ruzzy== ERROR: could not write the input to "
    });
    write_stderr(&path[..len]);
    write_stderr(b"\n");
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
/// process is about to die. Under LibAFL's runtime, which has no death
/// callback to write it, the input is written as `crash-<sha1>` here.
extern "C" fn after_asan_report(_report: *const std::ffi::c_char) {
    after_report(crate::process::libfuzzer::get().is_libafl());
}

/// UndefinedBehaviorSanitizer's death callback under LibAFL's runtime
/// (which sets none): its report is complete and the process is about to
/// exit with UBSAN_OPTIONS' exitcode; the reproduction lines and the input,
/// as `crash-<sha1>`.
extern "C" fn after_ubsan_report() {
    after_report(true);
}

/// After a sanitizer's report: the Ruby backtrace of the fuzz target
/// (unless it was printed above the report: a preload built by ruzzy), the
/// reproduction lines, and the input as `crash-<sha1>` when `save` (under
/// LibAFL, which does not save it).
fn after_report(save: bool) {
    crate::findings::ruby_backtrace::print_in_report();
    print();
    if save {
        if let Some(input) = target_state::current_input() {
            write_artifact(input, FindingKind::Crash);
        }
    }
}

/// Under LibAFL's runtime with UndefinedBehaviorSanitizer's shared runtime
/// preloaded (and no AddressSanitizer, whose report callback does the
/// same): registers [`after_ubsan_report`] as the sanitizer's death
/// callback.
pub fn register_with_ubsan_under_libafl() {
    type SetCallback = unsafe extern "C" fn(extern "C" fn());
    let lookup = crate::rb::dl::lookup;
    if lookup(c"__asan_init").is_some() || lookup(c"__ubsan_handle_add_overflow").is_none() {
        return;
    }
    let Some(set) = lookup(c"__sanitizer_set_death_callback") else {
        return;
    };
    // SAFETY: the sanitizers' common interface declares exactly this
    // signature (sanitizer/common_interface_defs.h).
    let set: SetCallback = unsafe { std::mem::transmute(set) };
    // SAFETY: stores a function pointer that lives as long as the process.
    unsafe { set(after_ubsan_report) };
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
/// report callback; ASan's was printed already, and [`print`] prints once),
/// with the Ruby backtrace if it is not printed yet.
extern "C" fn before_death() {
    crate::findings::ruby_backtrace::print_in_report();
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

//! Describing ruzzy's fake PCs, and the Ruby stack, for libFuzzer.
//!
//! The bundled libFuzzer calls `__sanitizer_symbolize_pc` (defined in
//! `sanitizer_callbacks.c`, forwarding here) for `-print_pcs=1`,
//! `-print_coverage=1` and similar output. ruzzy's PCs are
//! `PC_BASE + PC_STRIDE * counter index`, described as the Ruby location that first
//! reached the counter (`in ruby path:line`).
//!
//! `__sanitizer_print_stack_trace` is called by libFuzzer on a crash or a
//! timeout: it prints a Ruby exception finding's frames
//! ([`crate::findings::crash_frames`]), or the Ruby backtrace while the target runs.
//!
//! Invariants: no allocation (output goes into libFuzzer's buffer or straight
//! to stderr); never panics across the C boundary.

use crate::coverage::hook;
use crate::coverage::sancov_8bit::counter_of_pc;
use crate::findings::ruby_backtrace::{self, BACKTRACE_HEADLINE};
use std::ffi::{c_char, c_void, CStr};
use std::io::Write;

/// # Safety
/// `fmt` is a NUL-terminated string; `out` has room for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ruzzy_symbolize_pc(
    pc: *mut c_void,
    fmt: *const c_char,
    out: *mut c_char,
    size: usize,
) {
    if out.is_null() || size == 0 {
        return;
    }
    // SAFETY: by the caller's contract, `out` has `size` writable bytes.
    let buffer = unsafe { std::slice::from_raw_parts_mut(out as *mut u8, size) };
    let fmt = if fmt.is_null() {
        &b"%p %F %L"[..]
    } else {
        // SAFETY: by the caller's contract, NUL-terminated.
        unsafe { CStr::from_ptr(fmt) }.to_bytes()
    };
    // A panic here ends the process as an internal error (process/internal_error.rs).
    let written = format_pc(pc as usize, fmt, &mut buffer[..size - 1]);
    buffer[written] = 0;
}

/// Writes libFuzzer's `%p %F %L`-style description of `pc`; returns the
/// number of bytes written (truncated to fit).
fn format_pc(pc: usize, fmt: &[u8], buffer: &mut [u8]) -> usize {
    let location = counter_of_pc(pc).and_then(hook::describe);
    let mut cursor = std::io::Cursor::new(buffer);
    let mut bytes = fmt.iter();
    while let Some(&byte) = bytes.next() {
        if byte != b'%' {
            let _ = cursor.write_all(&[byte]);
            continue;
        }
        let _ = match (bytes.next(), location) {
            (Some(b'p'), _) => write!(cursor, "{pc:#x}"),
            (Some(b'F'), Some(_)) => cursor.write_all(b"in ruby"),
            (Some(b'L'), Some((path, line))) => cursor
                .write_all(path)
                .and_then(|_| write!(cursor, ":{line}")),
            (Some(b's'), Some((path, _))) => cursor.write_all(path),
            (Some(b'l'), Some((_, line))) => write!(cursor, "{line}"),
            (Some(b'%'), _) => cursor.write_all(b"%"),
            (Some(_), None) => cursor.write_all(b"??"),
            _ => Ok(()),
        };
    }
    cursor.position() as usize
}

/// Prints the frames of a Ruby exception finding, or else the Ruby
/// backtrace of the running target (crash or timeout).
#[no_mangle]
pub extern "C" fn ruzzy_print_stack_trace() {
    if !crate::findings::crash_frames::print() {
        ruby_backtrace::print_once(BACKTRACE_HEADLINE, false);
    }
    crate::findings::reproduce::print();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_pcs_are_described_without_location() {
        let mut buffer = [0u8; 64];
        let n = format_pc(0x1234, b"%p %F %L", &mut buffer);
        assert_eq!(&buffer[..n], b"0x1234 ?? ??");
    }

    #[test]
    fn output_is_truncated_to_the_buffer() {
        let mut buffer = [0u8; 4];
        let n = format_pc(0x1234, b"%p", &mut buffer);
        assert_eq!(n, 4);
    }
}

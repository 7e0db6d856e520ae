//! Output that is safe in a signal handler: `write(2)` on whole buffers,
//! and formatting into a fixed buffer on the stack. Crash, timeout and
//! out-of-memory reports are written this way, where `eprint!` (which
//! takes a lock) and anything that allocates may deadlock: the signal may
//! have landed inside `malloc` or while the lock was held.
//!
//! Invariant: nothing here allocates, takes a lock or calls Ruby.

/// Writes `bytes` to standard error (`write(2)`: async-signal-safe).
pub fn write_stderr(bytes: &[u8]) {
    write_fd(2, bytes);
}

/// Writes all of `bytes` to `fd` with write(2) (async-signal-safe);
/// whether every byte was written.
pub fn write_fd(fd: libc::c_int, bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: writing a valid buffer to a file descriptor.
        let written = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if written <= 0 {
            return false;
        }
        rest = &rest[written as usize..];
    }
    true
}

/// Formats `args` on the stack (up to 512 bytes) and writes them to
/// stderr: async-signal-safe, unlike `eprint!`, which takes a lock.
pub fn write_stderr_fmt(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut buffer = [0u8; 512];
    let len = {
        let mut cursor = std::io::Cursor::new(&mut buffer[..]);
        let _ = cursor.write_fmt(args);
        cursor.position() as usize
    };
    write_stderr(&buffer[..len]);
}

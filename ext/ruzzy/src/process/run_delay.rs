//! How long the calling thread has waited for a core: the kernel's
//! run-queue delay (`/proc/thread-self/schedstat`, its second field). The
//! clock minus it is the time the thread ran or was blocked in a call
//! (Kernel#sleep, a read), the time a busy machine did not take from it:
//! the timeout's grace ([`crate::engine`]) and quiet coverage's measure of
//! what switching saves ([`crate::coverage`]) count that.
//!
//! Invariants: open, read and close only (async-signal-safe), no
//! allocation; None where the file cannot be read or parsed.

/// The calling thread's run-queue delay so far, in ns.
pub fn run_delay_ns() -> Option<u64> {
    let mut text = [0u8; 96];
    // SAFETY: a NUL-terminated path; open, read and close are
    // async-signal-safe, and read writes at most the buffer's length.
    let length = unsafe {
        let file = libc::open(
            c"/proc/thread-self/schedstat".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if file < 0 {
            return None;
        }
        let length = libc::read(file, text.as_mut_ptr().cast(), text.len());
        libc::close(file);
        length
    };
    let text = text.get(..usize::try_from(length).ok()?)?;
    second_field(text)
}

/// The second of the space-separated decimal numbers in `text` ("run
/// time, run delay, time slices").
fn second_field(text: &[u8]) -> Option<u64> {
    let field = text.split(|&b| b == b' ').nth(1)?;
    let digits = field.strip_suffix(b"\n").unwrap_or(field);
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Parsing a str allocates nothing.
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_delay_is_the_second_field() {
        assert_eq!(second_field(b"552848418 444050 65\n"), Some(444_050));
        assert_eq!(second_field(b"1 2\n"), Some(2));
        assert_eq!(second_field(b"1\n"), None);
        assert_eq!(second_field(b"1 x2 3\n"), None);
        assert_eq!(second_field(b"1  3\n"), None);
    }

    #[test]
    fn this_kernel_says_how_long_a_thread_waited_for_a_core() {
        assert!(
            run_delay_ns().is_some(),
            "/proc/thread-self/schedstat cannot be read"
        );
    }
}

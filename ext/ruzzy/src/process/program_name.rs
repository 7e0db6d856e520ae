//! The program's name as the C library says it: glibc's `assert()` and
//! `error()` start their message with `program_invocation_short_name`, a
//! pointer into `argv[0]`'s memory at its basename. Ruby's `$0 =` (ruzzy
//! sets it to the harness) writes the new title over that memory, so an
//! assertion failing in a C extension began with the title's tail from that
//! offset ("l4/work/rc/fuzz.rb: markdown.c:2927: ..."). [`keep`] points
//! both names at a static "ruby", as a plain `ruby harness.rb` prints them.
//!
//! Invariant: the names point at static memory from start-up on; nothing
//! reads or frees what they pointed at before.
//!
//! May use: nothing in the crate.

use std::ffi::{c_char, CStr};

/// The name the C library prints for this process.
const NAME: &CStr = c"ruby";

extern "C" {
    // glibc's and musl's (<errno.h>, _GNU_SOURCE); written once, at start-up.
    static mut program_invocation_short_name: *const c_char;
    static mut program_invocation_name: *const c_char;
}

/// Points the C library's program names at [`NAME`].
pub fn keep() {
    // SAFETY: both are plain pointer variables of the C library, read only
    // when it formats a message; this runs at `require`, on the thread
    // holding Ruby's lock, before any fuzzing thread exists, and the value
    // written is a pointer to a static NUL-terminated string.
    unsafe {
        program_invocation_short_name = NAME.as_ptr();
        program_invocation_name = NAME.as_ptr();
    }
}

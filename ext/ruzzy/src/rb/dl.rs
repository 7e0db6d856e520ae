//! The dynamic loader: symbols in the process's global scope and the shared
//! object an address belongs to.
//!
//! Invariants: callable at any time on any thread (libdl takes its own
//! locks); never from a signal handler.

use std::ffi::{c_void, CStr};

/// Looks a symbol up in the process's global scope (`dlsym(RTLD_DEFAULT)`).
/// Symbols local to a shared object, such as those of the libFuzzer bundled
/// in this extension, are never found.
pub fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no
    // preconditions; a null result means "not found".
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!symbol.is_null()).then_some(symbol)
}

/// The path of the shared object that defines `address`.
pub fn library_of(address: *const c_void) -> String {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads `address` and fills `info`; the file name it
    // returns points into the loader's own tables and is copied at once.
    let found = unsafe { libc::dladdr(address, &mut info) } != 0;
    if found && !info.dli_fname.is_null() {
        // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    } else {
        "(unknown library)".to_owned()
    }
}

/// The path of the shared object holding the Ruby interpreter (libruby, or
/// the `ruby` executable itself for a static build).
pub fn libruby() -> String {
    library_of(interpreter_code())
}

/// An address inside the Ruby interpreter's code (libruby, or the `ruby`
/// executable), for telling the interpreter's frames and library apart.
pub fn interpreter_code() -> *const c_void {
    rb_sys::rb_str_new as *const c_void
}

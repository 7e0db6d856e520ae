//! The one libFuzzer this process uses.
//!
//! A process must never run two libFuzzers: coverage registered with one is
//! invisible to the other. When a libFuzzer is already loaded in the process
//! (a sanitizer preload such as `Ruzzy::ASAN_PATH`), its entry points are
//! found with `dlsym(RTLD_DEFAULT, ...)` and used for everything; otherwise
//! the copy bundled in this extension is used. The bundled copy's symbols are
//! local to this shared object, so `dlsym` only ever finds a preloaded one.
//!
//! Invariants: the choice is made once, before the driver starts, and never
//! changes; reading it afterwards is a plain load (no lock, no allocation).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// libFuzzer's per-input callback type (`LLVMFuzzerTestOneInput`).
pub type TestOneInput = unsafe extern "C" fn(data: *const u8, size: usize) -> c_int;

/// `LLVMFuzzerRunDriver`.
pub type RunDriver =
    unsafe extern "C" fn(argc: *mut c_int, argv: *mut *mut *mut c_char, cb: TestOneInput) -> c_int;

extern "C" {
    // Resolved at link time to the bundled libFuzzer (libfuzzer-sys).
    fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        cb: TestOneInput,
    ) -> c_int;
}

/// Where the running libFuzzer comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The copy compiled into this extension.
    Bundled { library: String },
    /// A libFuzzer already present in the process, usually LD_PRELOADed.
    Preloaded { library: String },
}

/// The entry points of the chosen libFuzzer.
pub struct Engine {
    pub origin: Origin,
    pub run_driver: RunDriver,
}

impl Engine {
    /// One line for the log, in libFuzzer's `INFO:` style.
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Bundled { library } => {
                format!("INFO: ruzzy: using the libFuzzer bundled in {library}")
            }
            Origin::Preloaded { library } => {
                format!("INFO: ruzzy: using the preloaded libFuzzer in {library}")
            }
        }
    }
}

static ENGINE: OnceLock<Engine> = OnceLock::new();

/// The engine, chosen on first use.
pub fn get() -> &'static Engine {
    ENGINE.get_or_init(select)
}

fn select() -> Engine {
    match lookup(c"LLVMFuzzerRunDriver") {
        Some(symbol) => Engine {
            origin: Origin::Preloaded {
                library: library_of(symbol),
            },
            // SAFETY: a symbol named LLVMFuzzerRunDriver in a loaded libFuzzer
            // has exactly this signature (FuzzerInterface.h).
            run_driver: unsafe { std::mem::transmute::<*mut c_void, RunDriver>(symbol) },
        },
        None => Engine {
            origin: Origin::Bundled {
                library: library_of(LLVMFuzzerRunDriver as *mut c_void),
            },
            run_driver: LLVMFuzzerRunDriver,
        },
    }
}

/// Looks a symbol up in the process's global scope.
pub fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no
    // preconditions; a null result means "not found".
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!symbol.is_null()).then_some(symbol)
}

/// The path of the shared object that defines `address`.
pub fn library_of(address: *mut c_void) -> String {
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

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

/// `__sanitizer_cov_8bit_counters_init`.
pub type CountersInit = unsafe extern "C" fn(start: *mut u8, end: *mut u8);

/// `__sanitizer_cov_pcs_init`.
pub type PcsInit = unsafe extern "C" fn(start: *const usize, end: *const usize);

/// `__sanitizer_cov_trace_cmp8` (also the shape of `_div8`, second
/// argument ignored).
pub type TraceCmp8 = unsafe extern "C" fn(a: u64, b: u64);

/// `__sanitizer_weak_hook_memcmp`.
pub type WeakHookMemcmp = unsafe extern "C" fn(
    caller_pc: *const c_void,
    s1: *const c_void,
    s2: *const c_void,
    n: usize,
    result: c_int,
);

/// `__sanitizer_weak_hook_memmem`.
pub type WeakHookMemmem = unsafe extern "C" fn(
    caller_pc: *const c_void,
    s1: *const c_void,
    len1: usize,
    s2: *const c_void,
    len2: usize,
    result: *mut c_void,
);

extern "C" {
    // Resolved at link time to the bundled libFuzzer (libfuzzer-sys).
    fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        cb: TestOneInput,
    ) -> c_int;
    fn __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8);
    fn __sanitizer_cov_pcs_init(start: *const usize, end: *const usize);
    fn __sanitizer_cov_trace_cmp8(a: u64, b: u64);
    fn __sanitizer_cov_trace_div8(value: u64);
    fn __sanitizer_weak_hook_memcmp(
        caller_pc: *const c_void,
        s1: *const c_void,
        s2: *const c_void,
        n: usize,
        result: c_int,
    );
    fn __sanitizer_weak_hook_memmem(
        caller_pc: *const c_void,
        s1: *const c_void,
        len1: usize,
        s2: *const c_void,
        len2: usize,
        result: *mut c_void,
    );
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
    pub counters_init: CountersInit,
    pub pcs_init: PcsInit,
    pub trace_cmp8: TraceCmp8,
    /// `__sanitizer_cov_trace_div8`, called with the divisor first.
    pub trace_div8: TraceCmp8,
    pub weak_hook_memcmp: WeakHookMemcmp,
    pub weak_hook_memmem: WeakHookMemmem,
    /// Set when a coverage entry point comes from another library than the
    /// driver: that coverage would be invisible to the fuzzer.
    pub mismatch: Option<String>,
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

    /// Registers the Ruby edge map with this libFuzzer.
    pub fn register_coverage(&self, map: &crate::sancov_8bit::EdgeMap) {
        let counters = map.counters.as_ptr() as *mut u8;
        let pcs = map.pcs.as_ptr() as *const usize;
        // SAFETY: both tables live for the rest of the process (the map is
        // never freed) and have at least map.len() entries each (libFuzzer
        // requires the same count); they are registered once, before the
        // driver starts, and map.len() never changes afterwards.
        unsafe {
            (self.counters_init)(counters, counters.add(map.len()));
            (self.pcs_init)(pcs, pcs.add(map.len() * 2));
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
        Some(driver) => preloaded(driver),
        None => Engine {
            origin: Origin::Bundled {
                library: library_of(LLVMFuzzerRunDriver as *mut c_void),
            },
            run_driver: LLVMFuzzerRunDriver,
            counters_init: __sanitizer_cov_8bit_counters_init,
            pcs_init: __sanitizer_cov_pcs_init,
            trace_cmp8: __sanitizer_cov_trace_cmp8,
            // SAFETY: on the SysV ABI a function of one u64 can be called
            // with a second, ignored argument.
            trace_div8: unsafe {
                std::mem::transmute::<unsafe extern "C" fn(u64), TraceCmp8>(
                    __sanitizer_cov_trace_div8,
                )
            },
            weak_hook_memcmp: __sanitizer_weak_hook_memcmp,
            weak_hook_memmem: __sanitizer_weak_hook_memmem,
            mismatch: None,
        },
    }
}

fn preloaded(driver: *mut c_void) -> Engine {
    let library = library_of(driver);
    let mut mismatch = None;
    let mut entry = |name: &CStr, bundled: *mut c_void| match lookup(name) {
        Some(symbol) if library_of(symbol) == library => symbol,
        found => {
            let from = found.map_or_else(|| "nowhere".to_owned(), library_of);
            mismatch.get_or_insert(format!(
                "{} comes from {from}, not from the libFuzzer in {library}",
                name.to_string_lossy()
            ));
            found.unwrap_or(bundled)
        }
    };
    let counters = entry(
        c"__sanitizer_cov_8bit_counters_init",
        __sanitizer_cov_8bit_counters_init as *mut c_void,
    );
    let pcs = entry(
        c"__sanitizer_cov_pcs_init",
        __sanitizer_cov_pcs_init as *mut c_void,
    );
    let cmp8 = entry(
        c"__sanitizer_cov_trace_cmp8",
        __sanitizer_cov_trace_cmp8 as *mut c_void,
    );
    let div8 = entry(
        c"__sanitizer_cov_trace_div8",
        __sanitizer_cov_trace_div8 as *mut c_void,
    );
    let memcmp = entry(
        c"__sanitizer_weak_hook_memcmp",
        __sanitizer_weak_hook_memcmp as *mut c_void,
    );
    let memmem = entry(
        c"__sanitizer_weak_hook_memmem",
        __sanitizer_weak_hook_memmem as *mut c_void,
    );
    // SAFETY: symbols with these names in a loaded libFuzzer (or the bundled
    // fallbacks) have exactly these signatures (FuzzerInterface.h,
    // sanitizer/common_interface_defs.h, sanitizer/coverage_interface.h);
    // trace_div8 takes one u64, and a second argument is ignored (SysV ABI).
    unsafe {
        Engine {
            origin: Origin::Preloaded { library },
            run_driver: std::mem::transmute::<*mut c_void, RunDriver>(driver),
            counters_init: std::mem::transmute::<*mut c_void, CountersInit>(counters),
            pcs_init: std::mem::transmute::<*mut c_void, PcsInit>(pcs),
            trace_cmp8: std::mem::transmute::<*mut c_void, TraceCmp8>(cmp8),
            trace_div8: std::mem::transmute::<*mut c_void, TraceCmp8>(div8),
            weak_hook_memcmp: std::mem::transmute::<*mut c_void, WeakHookMemcmp>(memcmp),
            weak_hook_memmem: std::mem::transmute::<*mut c_void, WeakHookMemmem>(memmem),
            mismatch,
        }
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

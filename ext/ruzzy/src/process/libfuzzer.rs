//! The one libFuzzer this process uses.
//!
//! A process must never run two libFuzzers: coverage registered with one is
//! invisible to the other. When a libFuzzer is already loaded in the process
//! (a sanitizer preload such as `Ruzzy::ASAN_PATH`), its entry points are
//! found with `dlsym(RTLD_DEFAULT, ...)` and used for everything; otherwise
//! the copy bundled in this extension is used. The bundled copy's symbols are
//! local to this shared object, so `dlsym` only ever finds a preloaded one.
//!
//! A preloaded engine is either a libFuzzer or LibAFL's libFuzzer-compatible
//! runtime (`ruzzy --engine=libafl`), told apart by a symbol only the latter
//! has ([`Kind`]). LibAFL's runtime lacks two hooks: divisions feed nothing
//! there, and a substring search is handed to its `memcmp` hook (the
//! needle against the start of the haystack, which its input-to-state
//! mutation can then write into the input).
//!
//! Invariants: the choice is made once, before the driver starts, and never
//! changes; reading it afterwards is a plain load (no lock, no allocation).

use crate::rb::dl;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// libFuzzer's per-input callback type (`LLVMFuzzerTestOneInput`).
pub type TestOneInput = unsafe extern "C" fn(data: *const u8, size: usize) -> c_int;

/// Declares each libFuzzer entry point once: its C declaration (bound at
/// link time to the bundled copy), the field of [`Engine`] that holds it,
/// and its function type. [`Engine::from_symbols`] fills every field.
macro_rules! entry_points {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ident = fn $symbol:ident($($arg:ident: $argty:ty),*) $(-> $ret:ty)?;
    )*) => {
        $(
            $(#[$doc])*
            pub type $ty = unsafe extern "C" fn($($argty),*) $(-> $ret)?;
        )*

        extern "C" {
            // Resolved at link time to the bundled libFuzzer (libfuzzer-sys).
            $(fn $symbol($($arg: $argty),*) $(-> $ret)?;)*
        }

        /// The entry points of the chosen libFuzzer.
        pub struct Engine {
            pub origin: Origin,
            pub kind: Kind,
            /// Set when a coverage entry point comes from another library
            /// than the driver: that coverage would be invisible to the
            /// fuzzer.
            pub mismatch: Option<String>,
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl Engine {
            /// An engine whose entry points `find` chooses, given each
            /// symbol's name and the bundled copy's address.
            fn from_symbols(
                origin: Origin,
                kind: Kind,
                mut find: impl FnMut(&CStr, *mut c_void) -> *mut c_void,
            ) -> Engine {
                Engine {
                    origin,
                    kind,
                    mismatch: None,
                    $($field: {
                        const NAME: &CStr = symbol_name(concat!(stringify!($symbol), "\0"));
                        let address = find(NAME, $symbol as *mut c_void);
                        // SAFETY: `find` returns either the bundled symbol
                        // itself or a symbol of the same name in a loaded
                        // libFuzzer, which has the same signature
                        // (FuzzerInterface.h, sanitizer/common_interface_defs.h,
                        // sanitizer/coverage_interface.h).
                        unsafe { std::mem::transmute::<*mut c_void, $ty>(address) }
                    },)*
                }
            }
        }
    };
}

const fn symbol_name(bytes_with_nul: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes_with_nul.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("a symbol name has no NUL terminator"),
    }
}

entry_points! {
    /// `LLVMFuzzerRunDriver`.
    run_driver: RunDriver = fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        cb: TestOneInput
    ) -> c_int;
    /// `LLVMFuzzerMutate`: libFuzzer's own mutation, for custom mutators.
    mutate: Mutate = fn LLVMFuzzerMutate(data: *mut u8, size: usize, max_size: usize) -> usize;
    /// `__sanitizer_cov_8bit_counters_init`.
    counters_init: CountersInit = fn __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8);
    /// `__sanitizer_cov_pcs_init`.
    pcs_init: PcsInit = fn __sanitizer_cov_pcs_init(start: *const usize, end: *const usize);
    /// `__sanitizer_cov_trace_cmp8`.
    trace_cmp8: TraceCmp8 = fn __sanitizer_cov_trace_cmp8(a: u64, b: u64);
    /// `__sanitizer_cov_trace_div8`.
    trace_div8: TraceDiv8 = fn __sanitizer_cov_trace_div8(divisor: u64);
    /// `__sanitizer_weak_hook_memcmp`.
    weak_hook_memcmp: WeakHookMemcmp = fn __sanitizer_weak_hook_memcmp(
        caller_pc: *const c_void,
        s1: *const c_void,
        s2: *const c_void,
        n: usize,
        result: c_int
    );
    /// `__sanitizer_weak_hook_memmem`.
    weak_hook_memmem: WeakHookMemmem = fn __sanitizer_weak_hook_memmem(
        caller_pc: *const c_void,
        s1: *const c_void,
        len1: usize,
        s2: *const c_void,
        len2: usize,
        result: *mut c_void
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

/// Which engine answers libFuzzer's entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// LLVM's libFuzzer: it writes artifacts, ends runs at `-runs` and
    /// `-max_total_time`, and exits with `-error_exitcode` after a crash.
    LibFuzzer,
    /// LibAFL's libFuzzer-compatible runtime (`libafl_libfuzzer`): ruzzy
    /// writes the artifacts of Ruby findings, ends runs and chooses the
    /// exit status itself (see `engine::run_limits`).
    LibAfl,
}

impl Kind {
    /// The engine's name as `ruzzy --engine` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::LibFuzzer => "libfuzzer",
            Kind::LibAfl => "libafl",
        }
    }
}

/// A symbol that LibAFL's runtime defines and libFuzzer does not.
const LIBAFL_MARKER: &CStr = c"libafl_targets_libfuzzer_init";

/// What `__sanitizer_cov_trace_div8` is under an engine without it.
extern "C" fn ignore_division(_divisor: u64) {}

/// What `__sanitizer_weak_hook_memmem` is under an engine without it: the
/// engine's `memcmp` hook on the needle and the haystack's first bytes.
extern "C" fn memmem_as_memcmp(
    caller_pc: *const c_void,
    haystack: *const c_void,
    haystack_len: usize,
    needle: *const c_void,
    needle_len: usize,
    _result: *mut c_void,
) {
    let len = haystack_len.min(needle_len);
    if len == 0 {
        return;
    }
    // SAFETY: both pointers are valid for `len` bytes (the caller's own
    // lengths), and the hook only reads them during the call.
    unsafe { (get().weak_hook_memcmp)(caller_pc, haystack, needle, len, 1) }
}

impl Engine {
    /// Whether this is LibAFL's runtime (ruzzy then ends runs, and reports
    /// crashes, timeouts and out-of-memory and writes their artifacts
    /// itself).
    pub fn is_libafl(&self) -> bool {
        self.kind == Kind::LibAfl
    }

    /// One line for the log, in libFuzzer's `INFO:` style.
    pub fn describe(&self) -> String {
        match (&self.origin, self.kind) {
            (Origin::Bundled { library }, _) => {
                format!("INFO: ruzzy: using the libFuzzer bundled in {library}")
            }
            (Origin::Preloaded { library }, Kind::LibFuzzer) => {
                format!("INFO: ruzzy: using the preloaded libFuzzer in {library}")
            }
            (Origin::Preloaded { library }, Kind::LibAfl) => {
                format!("INFO: ruzzy: using LibAFL's libFuzzer-compatible engine in {library}")
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
    let Some(driver) = dl::lookup(c"LLVMFuzzerRunDriver") else {
        let library = dl::library_of(LLVMFuzzerRunDriver as *const c_void);
        return Engine::from_symbols(
            Origin::Bundled { library },
            Kind::LibFuzzer,
            |_, bundled| bundled,
        );
    };
    let library = dl::library_of(driver);
    let kind = match dl::lookup(LIBAFL_MARKER) {
        Some(marker) if dl::library_of(marker) == library => Kind::LibAfl,
        _ => Kind::LibFuzzer,
    };
    let mut mismatch = None;
    let mut engine = Engine::from_symbols(
        Origin::Preloaded {
            library: library.clone(),
        },
        kind,
        |name, bundled| match dl::lookup(name) {
            Some(symbol) if dl::library_of(symbol) == library => symbol,
            // Hooks LibAFL's runtime lacks (a sanitizer runtime preloaded
            // behind it may define empty ones).
            _ if kind == Kind::LibAfl && name == c"__sanitizer_cov_trace_div8" => {
                ignore_division as *mut c_void
            }
            _ if kind == Kind::LibAfl && name == c"__sanitizer_weak_hook_memmem" => {
                memmem_as_memcmp as *mut c_void
            }
            found => {
                let from = found.map_or_else(|| "nowhere".to_owned(), |s| dl::library_of(s));
                mismatch.get_or_insert(format!(
                    "{} comes from {from}, not from the libFuzzer in {library}",
                    name.to_string_lossy()
                ));
                found.unwrap_or(bundled)
            }
        },
    );
    engine.mismatch = mismatch;
    engine
}

//! Keeps AddressSanitizer's view of the stack true across Ruby exceptions.
//!
//! Ruby raises with a longjmp that AddressSanitizer does not intercept. The
//! redzones of sanitizer-instrumented C frames jumped over stay poisoned and
//! later produce false reports when other code uses that stack memory.
//! When a sanitizer runtime is loaded, `Ruzzy.fuzz` enables a
//! `TracePoint(:raise)` whose block calls `Ruzzy::Native._clear_stack_poisoning`,
//! which calls `__asan_handle_no_return()`: what AddressSanitizer's own
//! longjmp interceptor does.
//!
//! (A raw RUBY_EVENT_RAISE event hook calling the same function from the
//! same place did not clear the false reports in tests; the TracePoint
//! does.)
//!
//! Invariants: a no-op without AddressSanitizer; allocates nothing.

use std::ffi::c_void;
use std::sync::OnceLock;

static HANDLE_NO_RETURN: OnceLock<Option<usize>> = OnceLock::new();

fn handle_no_return() -> Option<usize> {
    *HANDLE_NO_RETURN
        .get_or_init(|| crate::rb::dl::lookup(c"__asan_handle_no_return").map(|f| f as usize))
}

/// `Ruzzy::Native._asan_present?`: whether AddressSanitizer is in the process.
pub fn asan_present() -> bool {
    handle_no_return().is_some()
}

/// `Ruzzy::Native._clear_stack_poisoning`: unpoisons the stack a raise abandons.
pub fn clear_stack_poisoning() {
    if let Some(function) = handle_no_return() {
        // SAFETY: the address of __asan_handle_no_return(void), found in
        // the loaded sanitizer runtime.
        unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(function as *mut c_void)()
        };
    }
}

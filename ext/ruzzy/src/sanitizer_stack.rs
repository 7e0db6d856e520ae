//! Keeps AddressSanitizer's view of the stack true across Ruby exceptions.
//!
//! Ruby raises with a longjmp that AddressSanitizer does not intercept. The
//! redzones of sanitizer-instrumented C frames jumped over stay poisoned and
//! later produce false reports in unrelated code. When a sanitizer runtime
//! is loaded, a RUBY_EVENT_RAISE hook calls `__asan_handle_no_return()`
//! just before each raise unwinds, which is what AddressSanitizer's own
//! longjmp interceptor does: it unpoisons the stack the jump abandons.
//!
//! Invariants: installed at most once, only when the runtime provides the
//! function; the hook allocates nothing.

use crate::engine;
use rb_sys::{rb_trace_arg_t, VALUE};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

/// RUBY_EVENT_RAISE.
const RAISE_EVENT: u32 = 0x0100;

static HANDLE_NO_RETURN: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the raise hook when AddressSanitizer is in the process.
/// Returns whether it did.
pub fn install() -> bool {
    let Some(function) = engine::lookup(c"__asan_handle_no_return") else {
        return false;
    };
    if HANDLE_NO_RETURN.swap(function, Ordering::Relaxed).is_null() {
        crate::rb::add_raw_event_hook(on_raise, RAISE_EVENT);
    }
    true
}

unsafe extern "C" fn on_raise(_data: VALUE, _arg: *mut rb_trace_arg_t) {
    let function = HANDLE_NO_RETURN.load(Ordering::Relaxed);
    if !function.is_null() {
        // SAFETY: the address of __asan_handle_no_return(void), found in
        // the loaded sanitizer runtime.
        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(function)() };
    }
}

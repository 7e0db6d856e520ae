//! The stack depth a preloaded libFuzzer measures: `__sancov_lowest_stack`,
//! the lowest frame address an instrumented function (built with
//! `-fsanitize=fuzzer-no-link`, which includes `stack-depth` on Linux) saw
//! on this thread. libFuzzer sets it to its own frame before each input and
//! counts how far below the input went as a feature.
//!
//! [`before_input`] remembers where libFuzzer set it; [`deepest`] is where
//! the input got to (what the sanitizer clearing after the target needs);
//! [`forget`] puts it back, so that a rejected input's depth is no
//! feature.
//!
//! Invariants: only on the fuzzing thread (the variable is thread-local,
//! found once with `dlsym`, which gives the calling thread's); does nothing
//! when no preloaded libFuzzer defines it (the bundled copy's is local to
//! this extension, and no C code is instrumented without a preload).

use std::cell::Cell;

thread_local! {
    /// This thread's `__sancov_lowest_stack` (None: not looked up yet;
    /// Some(null): there is none).
    static SLOT: Cell<Option<*mut usize>> = const { Cell::new(None) };
    /// Its value when the input started.
    static AT_START: Cell<usize> = const { Cell::new(0) };
}

fn slot() -> Option<*mut usize> {
    let slot = SLOT.get().unwrap_or_else(|| {
        let found = crate::rb::dl::lookup(c"__sancov_lowest_stack")
            .map_or(std::ptr::null_mut(), |symbol| symbol.cast::<usize>());
        SLOT.set(Some(found));
        found
    });
    (!slot.is_null()).then_some(slot)
}

/// Before an input: remembers where libFuzzer set the lowest stack.
#[inline]
pub fn before_input() {
    if let Some(slot) = slot() {
        // SAFETY: this thread's instance of the preloaded libFuzzer's
        // thread-local variable.
        AT_START.set(unsafe { slot.read_volatile() });
    }
}

/// The lowest frame address an instrumented function recorded since the
/// input started, when a preloaded libFuzzer keeps one.
#[inline]
pub fn deepest() -> Option<usize> {
    // SAFETY: as in before_input.
    slot().map(|slot| unsafe { slot.read_volatile() })
}

/// Puts the lowest stack back where libFuzzer set it before the input.
pub fn forget() {
    if let Some(slot) = slot() {
        // SAFETY: as in before_input.
        unsafe { slot.write_volatile(AT_START.get()) };
    }
}

//! Tells a sanitizer preload built by ruzzy whether libFuzzer's value
//! profile is on (`-use_value_profile=1`). The preload's hooks for the 1-
//! and 2-byte comparisons and indirect calls of instrumented C code feed
//! only the value profile; they return at once while it is off (see
//! `lib/ruzzy/sanitizers/preload_compare_gate.c`).
//!
//! Invariant: called once, before libFuzzer starts; with no such preload
//! (the bundled libFuzzer, an older or foreign preload) it does nothing.

type SetValueProfile = unsafe extern "C" fn(std::ffi::c_int);

/// Opens the preload's gate when `on`, keeps it closed otherwise.
pub fn configure(on: bool) {
    if let Some(set) = crate::rb::dl::lookup(c"ruzzy_preload_set_value_profile") {
        // SAFETY: the preload defines this symbol with exactly this
        // signature (lib/ruzzy/sanitizers/preload_compare_gate.c).
        let set: SetValueProfile = unsafe { std::mem::transmute(set) };
        // SAFETY: stores an int; safe to call at any time.
        unsafe { set(std::ffi::c_int::from(on)) };
    }
}

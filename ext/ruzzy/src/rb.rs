//! The raw Ruby C API calls the hot paths need, fenced into one module.
//!
//! magnus is used for everything that runs once (definitions, validation);
//! the per-input callback uses these thin wrappers instead because it must
//! not allocate beyond the input String and must never let a Ruby exception
//! (a longjmp) cross libFuzzer's C++ frames.
//!
//! Invariant: every function here is called on the thread that holds the
//! GVL (the thread that called `Ruzzy.fuzz`).

use rb_sys::{rb_trace_arg_t, ruby_special_consts, VALUE};
use std::ffi::{c_int, c_void};

pub const QNIL: VALUE = ruby_special_consts::RUBY_Qnil as VALUE;

/// Runs `body` under `rb_protect`: a Ruby exception (or any other non-local
/// exit) comes back as `Err(errinfo)` instead of unwinding through the
/// caller. `errinfo` is cleared so the interpreter state stays clean.
/// No allocation: the closure travels by pointer.
pub fn protect<F: FnOnce() -> VALUE>(body: F) -> Result<VALUE, VALUE> {
    unsafe extern "C" fn trampoline<F: FnOnce() -> VALUE>(arg: VALUE) -> VALUE {
        // SAFETY: `arg` is the address of the `Option<F>` below, alive for
        // the whole rb_protect call, and taken exactly once.
        let slot = unsafe { &mut *(arg as *mut Option<F>) };
        match slot.take() {
            Some(body) => body(),
            None => QNIL,
        }
    }
    let mut slot = Some(body);
    let mut state: c_int = 0;
    // SAFETY: rb_protect calls the trampoline once with the pointer we pass;
    // we hold the GVL (module invariant).
    let result = unsafe {
        rb_sys::rb_protect(
            Some(trampoline::<F>),
            &mut slot as *mut Option<F> as *mut c_void as VALUE,
            &mut state,
        )
    };
    if state == 0 {
        Ok(result)
    } else {
        // SAFETY: after a non-zero state, errinfo holds what was raised.
        let error = unsafe { rb_sys::rb_errinfo() };
        // SAFETY: clearing errinfo is always allowed with the GVL held.
        unsafe { rb_sys::rb_set_errinfo(QNIL) };
        Err(error)
    }
}

/// Interns a method name (at set-up time, never in a hot path).
pub fn intern(name: &std::ffi::CStr) -> rb_sys::ID {
    // SAFETY: a NUL-terminated name; rb_intern never raises for ASCII names.
    unsafe { rb_sys::rb_intern(name.as_ptr()) }
}

/// RUBY_EVENT_HOOK_FLAG_SAFE | RUBY_EVENT_HOOK_FLAG_RAW_ARG.
const RAW_HOOK_FLAGS: u32 = 0x01 | 0x04;

/// An event hook called with the raw trace argument.
pub type RawEventHook = unsafe extern "C" fn(VALUE, *mut rb_trace_arg_t);

extern "C" {
    // Declared here rather than taken from rb-sys, whose binding types the
    // flags as an enum that cannot hold SAFE|RAW_ARG, and the function type
    // as the non-RAW_ARG signature.
    fn rb_add_event_hook2(func: RawEventHook, events: u32, data: VALUE, flags: u32);
}

/// Adds a global event hook for `events` that receives the raw trace
/// argument (no allocation per event).
pub fn add_raw_event_hook(hook: RawEventHook, events: u32) {
    // SAFETY: the hook has the RAW_ARG signature; we hold the GVL.
    unsafe { rb_add_event_hook2(hook, events, QNIL, RAW_HOOK_FLAGS) };
}

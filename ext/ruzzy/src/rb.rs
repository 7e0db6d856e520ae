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
use std::sync::OnceLock;

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

static NO_MEMORY_AT: OnceLock<Option<Box<str>>> = OnceLock::new();

/// Test hook for the paths a failed allocation takes: when the environment
/// variable `RUZZY_INJECT_NO_MEMORY` names `site`, raises `NoMemoryError`
/// as Ruby does when an allocation fails. Sites: `string`, `integer` and
/// `float` (the helpers below), `input` (the target's input), `mutator`
/// (a custom mutator's or crossover's arguments). Call only inside
/// [`protect`].
pub fn no_memory_injected_at(site: &str) {
    let injected = NO_MEMORY_AT.get_or_init(|| {
        std::env::var("RUZZY_INJECT_NO_MEMORY")
            .ok()
            .map(String::into_boxed_str)
    });
    if injected.as_deref() == Some(site) {
        // SAFETY: raising inside `protect` (the documented precondition),
        // which catches it; the message is a NUL-terminated literal.
        unsafe {
            rb_sys::rb_raise(
                rb_sys::rb_eNoMemError,
                c"failed to allocate memory (RUZZY_INJECT_NO_MEMORY)".as_ptr(),
            )
        }
    }
}

/// A new String of `len` bytes written by `fill`, tagged UTF-8 when `utf8`
/// (binary otherwise). The allocation runs under [`protect`]: a
/// `NoMemoryError` comes back as `Err` instead of unwinding through Rust.
pub fn string_with(len: usize, utf8: bool, fill: impl FnOnce(&mut [u8])) -> Result<VALUE, VALUE> {
    let string = protect(|| {
        no_memory_injected_at("string");
        // SAFETY: a NULL pointer asks rb_str_new for `len` uninitialised
        // bytes; we hold the GVL.
        unsafe { rb_sys::rb_str_new(std::ptr::null(), len as _) }
    })?;
    // SAFETY: a fresh, unshared String of exactly `len` bytes; nothing runs
    // Ruby code (or the GC) while the slice is alive.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(rb_sys::RSTRING_PTR(string) as *mut u8, len) };
    fill(bytes);
    if utf8 {
        // SAFETY: associating an encoding with an unfrozen String neither
        // allocates nor raises.
        unsafe { rb_sys::rb_enc_associate_index(string, rb_sys::rb_utf8_encindex()) };
    }
    Ok(string)
}

/// A binary String holding `bytes` (see [`string_with`]).
pub fn binary_string(bytes: &[u8]) -> Result<VALUE, VALUE> {
    string_with(bytes.len(), false, |out| out.copy_from_slice(bytes))
}

/// The Integer whose big-endian bytes are `bytes`: two's complement when
/// `signed`, unsigned otherwise. Built under [`protect`].
pub fn integer_from_be_bytes(bytes: &[u8], signed: bool) -> Result<VALUE, VALUE> {
    let flags = rb_sys::INTEGER_PACK_BIG_ENDIAN
        | if signed {
            rb_sys::INTEGER_PACK_2COMP
        } else {
            0
        };
    protect(|| {
        no_memory_injected_at("integer");
        // SAFETY: `bytes` outlives the call; one byte per word, no nails.
        unsafe {
            rb_sys::rb_integer_unpack(bytes.as_ptr().cast(), bytes.len() as _, 1, 0, flags as _)
        }
    })
}

/// A Float (a heap object for values that are not flonums), built under
/// [`protect`].
pub fn float(value: f64) -> Result<VALUE, VALUE> {
    protect(|| {
        no_memory_injected_at("float");
        // SAFETY: we hold the GVL.
        unsafe { rb_sys::rb_float_new(value) }
    })
}

/// Whether `value` is an Integer (a Fixnum or a Bignum). No allocation.
pub fn is_integer(value: VALUE) -> bool {
    // SAFETY: a type check on a live VALUE reads only its header.
    unsafe { rb_sys::RB_INTEGER_TYPE_P(value) }
}

extern "C" {
    // Exported by libruby 3.1 to 3.4 (checked with `nm -D`); declared here
    // because rb-sys marks the postponed-job API deprecated from 3.3 on and
    // does not bind `rb_iseq_line_no` (vm_core.h, internal).
    fn rb_postponed_job_register_one(
        flags: std::ffi::c_uint,
        func: unsafe extern "C" fn(*mut c_void),
        data: *mut c_void,
    ) -> c_int;
    fn rb_iseq_line_no(iseq: *const c_void, position: usize) -> std::ffi::c_uint;
}

/// Asks Ruby to run `job` on the thread holding the GVL at its next safe
/// point (an interrupt check). Async-signal-safe: meant for signal handlers.
pub fn run_at_safe_point(job: unsafe extern "C" fn(*mut c_void)) -> bool {
    // SAFETY: documented as callable from a signal handler; `job` takes
    // no data.
    unsafe { rb_postponed_job_register_one(0, job, std::ptr::null_mut()) > 0 }
}

/// The source line of instruction `position` of `iseq`. Reads the iseq's
/// line table only (no allocation, no lock).
pub fn iseq_line(iseq: *const c_void, position: usize) -> u32 {
    // SAFETY (module invariant): `iseq` is a live rb_iseq_t of a frame of
    // this thread, and `position` lies inside its instructions.
    unsafe { rb_iseq_line_no(iseq, position) }
}

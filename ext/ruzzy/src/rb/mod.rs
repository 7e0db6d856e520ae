//! The only module that calls the raw Ruby C API and the dynamic loader.
//!
//! magnus is used for everything that runs once (definitions, validation);
//! the hot paths (the per-input callback, coverage events, comparison
//! hooks) use these thin wrappers instead, because they must not allocate
//! beyond the input String and must never let a Ruby exception (a longjmp)
//! cross libFuzzer's C++ frames or a Rust frame that owns something.
//!
//! - this file: running Ruby code under `rb_protect`, building Strings,
//!   Integers and Floats, calling methods, constants and GC roots, event
//!   hooks and postponed jobs;
//! - [`value`]: reading values without running Ruby code, and the
//!   [`value::Frame`] / [`value::MethodCall`] tokens whose borrows say how
//!   long bytes read from a String stay valid;
//! - [`method`]: defining C methods;
//! - [`interpreter_layout`]: the interpreter's internal structures, one
//!   layout per Ruby version;
//! - [`iseq_trace`]: switching one instruction sequence's coverage events
//!   off and on (the interpreter's exported but undeclared functions);
//! - [`dl`]: symbols and shared objects.
//!
//! Invariant: every function here is called on the thread that holds the
//! GVL (the thread that called `Ruzzy.fuzz`), except the async-signal-safe
//! [`run_at_safe_point`] and [`dl`].
//!
//! The bottom of the crate with [`crate::error`], whose exceptions a method
//! definition's failure becomes.
//!
//! May use: crate::error.

pub mod dl;
pub mod interpreter_layout;
pub mod iseq_trace;
pub mod method;
pub mod value;

use rb_sys::{rb_trace_arg_t, VALUE};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

pub use value::QNIL;

static NO_MEMORY_AT: OnceLock<Option<Box<str>>> = OnceLock::new();

/// Proof that the code holding it runs under [`protect`]: the calls that
/// may raise (allocate, call Ruby methods, look constants up) are its
/// methods, so none of them can be made where a raise would unwind through
/// libFuzzer's frames or a Rust frame that owns something.
pub struct Protected {
    _private: (),
}

/// Runs `body` under `rb_protect`: a Ruby exception (or any other non-local
/// exit) comes back as `Err(errinfo)` instead of unwinding through the
/// caller. `errinfo` is cleared so the interpreter state stays clean.
/// No allocation: the closure travels by pointer. `body` must own nothing
/// that needs dropping when Ruby raises through it.
pub fn protect<F: FnOnce(&Protected) -> VALUE>(body: F) -> Result<VALUE, VALUE> {
    unsafe extern "C" fn trampoline<F: FnOnce(&Protected) -> VALUE>(arg: VALUE) -> VALUE {
        // SAFETY: `arg` is the address of the `Option<F>` below, alive for
        // the whole rb_protect call, and taken exactly once.
        let slot = unsafe { &mut *(arg as *mut Option<F>) };
        match slot.take() {
            Some(body) => body(&Protected { _private: () }),
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

impl Protected {
    /// Test hook for the paths a failed allocation takes: when the environment
    /// variable `RUZZY_INJECT_NO_MEMORY` names `site`, raises `NoMemoryError`
    /// as Ruby does when an allocation fails. Sites: `string`, `integer` and
    /// `float` (the helpers below), `input` (the target's input), `mutator`
    /// (a custom mutator's or crossover's arguments).
    pub fn no_memory_injected_at(&self, site: &str) {
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

    /// A binary (ASCII-8BIT) String holding a copy of `bytes`.
    #[inline(always)]
    pub fn binary_string(&self, bytes: &[u8]) -> VALUE {
        // SAFETY: `bytes` is valid for its length; rb_str_new copies it and
        // raises NoMemoryError (caught by protect) when it cannot.
        unsafe { rb_sys::rb_str_new(bytes.as_ptr().cast(), bytes.len() as _) }
    }

    /// A UTF-8 String holding a copy of `text`.
    pub fn utf8_string(&self, text: &str) -> VALUE {
        // SAFETY: as for binary_string.
        unsafe { rb_sys::rb_utf8_str_new(text.as_ptr().cast(), text.len() as _) }
    }

    /// A Float.
    pub fn float(&self, value: f64) -> VALUE {
        // SAFETY: may allocate a heap Float; raises only NoMemoryError.
        unsafe { rb_sys::rb_float_new(value) }
    }

    /// An Integer (a Bignum for large values).
    pub fn unsigned(&self, value: u64) -> VALUE {
        // SAFETY: may allocate a Bignum; raises only NoMemoryError.
        unsafe { rb_sys::rb_ull2inum(value) }
    }

    /// The class or module at `path` ("Ruzzy::Findings::Report"); raises NameError
    /// when it is missing.
    pub fn class(&self, path: &std::ffi::CStr) -> VALUE {
        // SAFETY: a NUL-terminated path.
        unsafe { rb_sys::rb_path2class(path.as_ptr()) }
    }

    /// `receiver.method(*args)`, public or not. The arguments are on the
    /// caller's stack, which the GC scans.
    #[inline(always)]
    pub fn call(&self, receiver: VALUE, method: rb_sys::ID, args: &[VALUE]) -> VALUE {
        // SAFETY: a live receiver and live arguments, `args.len()` of them.
        unsafe { rb_sys::rb_funcallv(receiver, method, args.len() as c_int, args.as_ptr()) }
    }

    /// `Class.method(*args)` for the class at `path` (cold: interns the
    /// name and looks the class up on each call).
    pub fn call_class_method(&self, path: &std::ffi::CStr, method: &str, args: &[VALUE]) -> VALUE {
        // SAFETY: a name of `method.len()` bytes; rb_intern2 copies it.
        let id = unsafe { rb_sys::rb_intern2(method.as_ptr().cast(), method.len() as _) };
        self.call(self.class(path), id, args)
    }

    /// The current Ruby backtrace, printed to stderr (`rb_backtrace`).
    pub fn print_backtrace(&self) {
        // SAFETY: prints the running thread's backtrace.
        unsafe { rb_sys::rb_backtrace() }
    }
}

/// Makes `slot` (a static holding a VALUE, or nil) a GC root: whatever it
/// holds is marked, and pinned, by every GC. Register each slot once.
pub fn register_gc_root(slot: &'static std::sync::atomic::AtomicUsize) {
    // SAFETY: a static lives for the whole process; AtomicUsize has the
    // layout of VALUE; we hold the GVL (module invariant).
    unsafe { rb_sys::rb_gc_register_address(slot.as_ptr() as *mut VALUE) };
}

/// `value` as a `RubyVM::InstructionSequence`'s raw VALUE, or a TypeError
/// saying what it was.
pub fn instruction_sequence(
    ruby: &magnus::Ruby,
    value: magnus::Value,
) -> Result<VALUE, magnus::Error> {
    use magnus::{prelude::*, rb_sys::AsRawValue};
    let class: magnus::RClass = ruby.eval("RubyVM::InstructionSequence")?;
    if !value.is_kind_of(class) {
        return Err(magnus::Error::new(
            ruby.exception_type_error(),
            format!(
                "expected a RubyVM::InstructionSequence, got {}",
                value.class()
            ),
        ));
    }
    Ok(value.as_raw())
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

/// Removes the global event hook whose function is `func` (every hook
/// with it); whether one was removed.
///
/// # Safety
/// `func` is the function of a live event hook (an `rb_event_hook_func_t`,
/// as it was added).
pub unsafe fn remove_event_hook(func: *const c_void) -> bool {
    // SAFETY: by the caller's contract the address is such a function;
    // removing a hook by its function is public API; we hold the GVL.
    unsafe {
        let func: rb_sys::rb_event_hook_func_t = std::mem::transmute(func);
        rb_sys::rb_remove_event_hook(func) > 0
    }
}

/// The value of the global variable `name` (`c"$LOADED_FEATURES"`): the
/// interpreter's own globals are read by C getters that neither raise nor
/// run Ruby code.
pub fn global_variable(name: &std::ffi::CStr) -> VALUE {
    // SAFETY: a NUL-terminated name; we hold the GVL (module invariant).
    unsafe { rb_sys::rb_gv_get(name.as_ptr()) }
}

/// The source path String of the event described by `arg`.
///
/// # Safety
/// `arg` is the live trace argument of the RAW_ARG hook now running.
pub unsafe fn trace_path(arg: *mut rb_trace_arg_t) -> VALUE {
    // SAFETY: by the caller's contract.
    unsafe { rb_sys::rb_tracearg_path(arg) }
}

/// The source line of the event described by `arg` (at least 1).
///
/// # Safety
/// As for [`trace_path`].
pub unsafe fn trace_line(arg: *mut rb_trace_arg_t) -> u32 {
    // SAFETY: by the caller's contract; rb_tracearg_lineno returns a Fixnum.
    let line = unsafe { rb_sys::FIX2LONG(rb_sys::rb_tracearg_lineno(arg)) };
    line.clamp(1, i64::from(u32::MAX)) as u32
}

/// The event flag of the event described by `arg`.
///
/// # Safety
/// As for [`trace_path`].
pub unsafe fn trace_event(arg: *mut rb_trace_arg_t) -> u32 {
    // SAFETY: by the caller's contract.
    unsafe { rb_sys::rb_tracearg_event_flag(arg) as u32 }
}

/// The exception being raised, in a RUBY_EVENT_RAISE hook.
///
/// # Safety
/// As for [`trace_path`], in a raise event hook.
pub unsafe fn trace_raised_exception(arg: *mut rb_trace_arg_t) -> VALUE {
    // SAFETY: by the caller's contract.
    unsafe { rb_sys::rb_tracearg_raised_exception(arg) }
}

/// A new String of `len` bytes written by `fill`, tagged UTF-8 when `utf8`
/// (binary otherwise). The allocation runs under [`protect`]: a
/// `NoMemoryError` comes back as `Err` instead of unwinding through Rust.
pub fn string_with(len: usize, utf8: bool, fill: impl FnOnce(&mut [u8])) -> Result<VALUE, VALUE> {
    let string = protect(|ruby| {
        ruby.no_memory_injected_at("string");
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
    protect(|ruby| {
        ruby.no_memory_injected_at("integer");
        // SAFETY: `bytes` outlives the call; one byte per word, no nails.
        unsafe {
            rb_sys::rb_integer_unpack(bytes.as_ptr().cast(), bytes.len() as _, 1, 0, flags as _)
        }
    })
}

/// A Float (a heap object for values that are not flonums), built under
/// [`protect`].
pub fn float(value: f64) -> Result<VALUE, VALUE> {
    protect(|ruby| {
        ruby.no_memory_injected_at("float");
        ruby.float(value)
    })
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
    // SAFETY: by the module invariant, `iseq` is a live rb_iseq_t of a frame of
    // this thread, and `position` lies inside its instructions.
    unsafe { rb_iseq_line_no(iseq, position) }
}

/// The class or module named `name` at the top level, if it is defined
/// (StringScanner is only once strscan is loaded). Cold: not for hot paths.
pub fn loaded_class(name: &std::ffi::CStr) -> Option<VALUE> {
    let id = intern(name);
    // SAFETY: a core class global and an interned name; rb_const_defined
    // runs no Ruby code.
    if unsafe { rb_sys::rb_const_defined(rb_sys::rb_cObject, id) } == 0 {
        return None;
    }
    // SAFETY: as above; an autoload it triggers runs under rb_protect.
    protect(|_| unsafe { rb_sys::rb_const_get(rb_sys::rb_cObject, id) }).ok()
}

/// Whether the method `name` of `class` is still Ruby's own definition.
pub fn method_is_builtin(class: VALUE, name: &std::ffi::CStr) -> bool {
    // SAFETY: a live class and an interned name; no Ruby code runs.
    unsafe { rb_sys::rb_method_basic_definition_p(class, intern(name)) != 0 }
}

/// The top (highest address) of the machine stack the current fiber runs
/// on, as Ruby knows it (`ruby_stack_length`, public API): the thread's own
/// stack for its first fiber, the stack Ruby allocated for any other. It
/// grows down from there to the caller. Called on a Ruby thread holding
/// the GVL (any of them); runs no Ruby code and allocates nothing.
pub fn machine_stack_top() -> usize {
    let mut end: *mut VALUE = std::ptr::null_mut();
    // SAFETY: writes the current end of this fiber's machine stack into
    // `end` and returns the stack's length in VALUEs (for a stack growing
    // down, the top is that many VALUEs above the end).
    let length = unsafe { rb_sys::ruby_stack_length(&mut end) } as usize;
    (end as usize).saturating_add(length.saturating_mul(std::mem::size_of::<VALUE>()))
}

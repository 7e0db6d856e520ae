//! Custom mutators and crossover written in Ruby (`Ruzzy.fuzz(target,
//! mutator:, crossover:)`), and libFuzzer's own mutator for them
//! (`Ruzzy.mutate`).
//!
//! libFuzzer calls `LLVMFuzzerCustomMutator(data, size, max_size, seed)`
//! (`custom_mutator.c`), which calls the Ruby mutator with
//! `(data, max_size, seed)` and copies the String it returns back into
//! libFuzzer's buffer (truncated to `max_size`). Crossover likewise with
//! `(data1, data2, max_size, seed)`. Only the bundled libFuzzer is wired to
//! these hooks, and the sanitizer preloads ruzzy builds, whose copies of
//! the hooks (lib/ruzzy/sanitizers/preload_custom_mutator.c) forward to
//! the functions handed over by [`hand_to_preload`]; with another preloaded
//! libFuzzer `Ruzzy.fuzz` refuses them. Without a Ruby mutator (or
//! crossover), a typed target's inputs go to the structure-aware one
//! ([`super::structured`]) instead.
//!
//! A mutator that raises or returns something other than a String is a
//! harness bug: it is reported and the process exits with status 2, like
//! a fuzz target that returns an odd value.
//!
//! Invariants: the callables are GC-registered globals set once before the
//! driver starts; every Ruby call runs under `rb_protect`.

use crate::rb;
use magnus::{Error, RString, Ruby, Value};
use rb_sys::VALUE;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

static MUTATOR: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
static CROSSOVER: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// Set when the driver is about to start (the callables are registered
/// then, nil or not) and never cleared: libFuzzer runs until the process
/// ends. From then on LLVMFuzzerMutate is usable from a custom mutator.
static DRIVER_STARTED: AtomicBool = AtomicBool::new(false);

extern "C" {
    fn ruzzy_link_custom_mutator();
}

/// `LLVMFuzzerMutate` of the libFuzzer that runs.
pub type Mutate = unsafe extern "C" fn(data: *mut u8, size: usize, max_size: usize) -> usize;

static LIBFUZZER_MUTATE: OnceLock<Mutate> = OnceLock::new();

/// Records the Ruby callables (nil for none) and the running libFuzzer's
/// own mutator. Called once, with the GVL.
pub fn register(mutator: VALUE, crossover: VALUE, libfuzzer_mutate: Mutate) {
    // SAFETY: an empty C function; calling it keeps custom_mutator.c linked.
    unsafe { ruzzy_link_custom_mutator() };
    let _ = LIBFUZZER_MUTATE.set(libfuzzer_mutate);
    for (slot, value) in [(&MUTATOR, mutator), (&CROSSOVER, crossover)] {
        slot.store(value as usize, Ordering::Relaxed);
        rb::register_gc_root(slot);
    }
    DRIVER_STARTED.store(true, Ordering::Relaxed);
}

/// The preload's `ruzzy_preload_set_custom_mutators`, when the running
/// libFuzzer is a preload that has ruzzy's copies of the hooks.
fn preload_setter() -> Option<*mut std::ffi::c_void> {
    crate::rb::dl::lookup(c"ruzzy_preload_set_custom_mutators")
}

/// Whether a preloaded libFuzzer can call custom mutators (a sanitizer
/// preload built by this ruzzy).
pub fn preload_takes_mutators() -> bool {
    preload_setter().is_some()
}

/// Hands the hooks wanted ([`register`] first) to the preload's copies.
pub fn hand_to_preload() {
    type Mutator = extern "C" fn(*mut u8, usize, usize, u32) -> usize;
    type Crossover =
        extern "C" fn(*const u8, usize, *const u8, usize, *mut u8, usize, u32) -> usize;
    type Set = unsafe extern "C" fn(Option<Mutator>, Option<Crossover>);
    let Some(set) = preload_setter() else {
        return;
    };
    // SAFETY: the preload defines this symbol with exactly this signature
    // (lib/ruzzy/sanitizers/preload_custom_mutator.c); None is NULL.
    let set: Set = unsafe { std::mem::transmute(set) };
    let mutator = (ruzzy_wants_custom_mutator() != 0).then_some(ruzzy_custom_mutator as Mutator);
    let crossover =
        (ruzzy_wants_custom_crossover() != 0).then_some(ruzzy_custom_crossover as Crossover);
    // SAFETY: plain stores of function pointers that live as long as the
    // process, before the driver starts.
    unsafe { set(mutator, crossover) };
}

fn is_set(slot: &AtomicUsize) -> bool {
    slot.load(Ordering::Relaxed) as VALUE != rb::QNIL
}

#[no_mangle]
pub extern "C" fn ruzzy_wants_custom_mutator() -> c_int {
    c_int::from(is_set(&MUTATOR) || super::structured::active())
}

#[no_mangle]
pub extern "C" fn ruzzy_wants_custom_crossover() -> c_int {
    c_int::from(is_set(&CROSSOVER) || super::structured::active())
}

/// libFuzzer's own mutation of the `size` bytes in `buffer` (at most
/// `max_size`, which `buffer` has room for), for the structured mutator's
/// leaves.
fn libfuzzer_mutate(buffer: &mut [u8], size: usize, max_size: usize) -> usize {
    debug_assert!(size <= max_size && max_size <= buffer.len() && max_size > 0);
    raw_mutate(buffer.as_mut_ptr(), size, max_size)
}

/// The running libFuzzer's own mutation of `size` bytes at `data` (room for
/// `max_size`), in place.
fn raw_mutate(data: *mut u8, size: usize, max_size: usize) -> usize {
    let mutate = LIBFUZZER_MUTATE
        .get()
        .expect("registered before the driver starts");
    // SAFETY: `data` has room for `max_size` bytes; called only from inside
    // libFuzzer's custom mutator hook (or Ruzzy.mutate inside it), while the
    // driver runs.
    unsafe { mutate(data, size, max_size) }
}

/// Calls `callable.call(*args)`, with the arguments `build` makes, and
/// copies the String it returns into `out` (at most `max` bytes). Returns
/// the new size. The arguments are built under the same `rb_protect` as the
/// call, so a failed allocation is reported like an exception the callable
/// raised, never unwinding through libFuzzer.
fn call_into<const N: usize>(
    callable: &AtomicUsize,
    name: &str,
    build: impl FnOnce(&rb::Protected) -> [VALUE; N],
    out: *mut u8,
    max: usize,
) -> usize {
    let result = rb::protect(|ruby| {
        ruby.no_memory_injected_at("mutator");
        let args = build(ruby);
        // A live, GC-registered callable; `args` are on this stack frame,
        // which the GC scans.
        let callable = callable.load(Ordering::Relaxed) as VALUE;
        ruby.call(callable, rb::intern(c"call"), &args)
    });
    match result {
        // SAFETY: called by libFuzzer inside the per-input callback, on the
        // thread holding the GVL; the bytes are copied before Ruby runs.
        Ok(value) => match unsafe { rb::value::Frame::enter() }.string_bytes(value) {
            Some(bytes) => {
                let len = bytes.len().min(max);
                // SAFETY: libFuzzer's buffer has room for `max` bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, len) };
                len
            }
            None => crate::findings::report::harness_error(name, "returned a non-String", value),
        },
        Err(error) => crate::findings::report::harness_error(name, "raised", error),
    }
}

/// libFuzzer's `size` bytes at `data`.
fn bytes<'a>(data: *const u8, size: usize) -> &'a [u8] {
    // SAFETY: libFuzzer's buffer holds `size` bytes for the whole call.
    unsafe { std::slice::from_raw_parts(data, size) }
}

#[no_mangle]
pub extern "C" fn ruzzy_custom_mutator(
    data: *mut u8,
    size: usize,
    max_size: usize,
    seed: u32,
) -> usize {
    if !is_set(&MUTATOR) {
        if let Some(size) =
            super::structured::mutate(data, size, max_size, seed, &mut libfuzzer_mutate)
        {
            return size;
        }
        return raw_mutate(data, size, max_size);
    }
    let args = |ruby: &rb::Protected| {
        [
            ruby.binary_string(bytes(data, size)),
            ruby.unsigned(max_size as u64),
            ruby.unsigned(u64::from(seed)),
        ]
    };
    call_into(&MUTATOR, "mutator", args, data, max_size)
}

#[no_mangle]
pub extern "C" fn ruzzy_custom_crossover(
    data1: *const u8,
    size1: usize,
    data2: *const u8,
    size2: usize,
    out: *mut u8,
    max_out_size: usize,
    seed: u32,
) -> usize {
    if !is_set(&CROSSOVER) {
        return super::structured::crossover(
            bytes(data1, size1),
            bytes(data2, size2),
            out,
            max_out_size,
            seed,
        );
    }
    let args = |ruby: &rb::Protected| {
        [
            ruby.binary_string(bytes(data1, size1)),
            ruby.binary_string(bytes(data2, size2)),
            ruby.unsigned(max_out_size as u64),
            ruby.unsigned(u64::from(seed)),
        ]
    };
    call_into(&CROSSOVER, "crossover", args, out, max_out_size)
}

/// `Ruzzy::Native._mutate(data, max_size)`: libFuzzer's own mutation of `data`.
pub fn mutate(ruby: &Ruby, data: RString, max_size: usize) -> Result<Value, Error> {
    if !DRIVER_STARTED.load(Ordering::Relaxed) || !is_set(&MUTATOR) {
        return Err(Error::new(
            ruby.exception_runtime_error(),
            "Ruzzy.mutate works only inside a custom mutator, while Ruzzy.fuzz runs",
        ));
    }
    // SAFETY: copied at once, before any Ruby code runs.
    let mut buffer = unsafe { data.as_slice() }.to_vec();
    let size = buffer.len();
    buffer.resize(size.max(max_size).max(1), 0);
    // `buffer` has room for max(size, max_size) bytes.
    let new_size = raw_mutate(buffer.as_mut_ptr(), size, max_size.max(1));
    buffer.truncate(new_size);
    crate::error::value_of(rb::binary_string(&buffer))
}

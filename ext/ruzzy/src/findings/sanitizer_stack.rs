//! Keeps AddressSanitizer's view of the stack true across Ruby's non-local
//! exits.
//!
//! Ruby leaves frames early with a longjmp that AddressSanitizer does not
//! intercept: a raised exception, and also `break`, `next`, `throw` and
//! `return` out of a block that a C function yields to. The redzones of
//! sanitizer-instrumented C frames jumped over stay poisoned, and code that
//! later uses that stack memory through a function AddressSanitizer checks
//! (the interpreter's, ruzzy's and libFuzzer's `memcpy`, libc's
//! `sigaltstack`) is reported as a stack-buffer-overflow that is not there.
//! Describing such an address, AddressSanitizer looks for the frame it
//! belongs to, finds one long gone and dies on its own check instead
//! (`CHECK failed: asan_thread.cpp:370 "((ptr[0] ==
//! kCurrentStackFrameMagic)) != (0)"`).
//!
//! Three clearings, where AddressSanitizer is in the process:
//! - [`clear_stack_poisoning`], when Ruby raises (`Ruzzy.fuzz` enables a
//!   `TracePoint(:raise)` whose block calls
//!   `Ruzzy::Native._clear_stack_poisoning`): the stack the raise abandons,
//!   from a window below the caller up to the top of the machine stack of
//!   the fiber running (Ruby's, [`crate::rb::machine_stack_top`]).
//!   AddressSanitizer's own `__asan_handle_no_return`, which its longjmp
//!   interceptor calls, knows threads' stacks only: on a fiber's
//!   (`Enumerator#next` runs its block on one) it refuses ("ASan is
//!   ignoring requested __asan_handle_no_return") and clears nothing.
//! - [`clear_fiber_stack`], when a fiber starts or resumes (a
//!   `TracePoint(:fiber_switch)`): the dead part of its stack below. Ruby
//!   reuses a finished or collected fiber's stack for the next one, with
//!   the poisoning of whatever was live on it when it was abandoned (an
//!   Enumerator left after `next` while its block was inside instrumented
//!   C frames).
//! - [`clear_below`], after each run of the target (the engine's callback):
//!   the dead stack below the callback, down past the deepest point an
//!   instrumented frame reached during the input. A `break` or `throw` out
//!   of instrumented C frames raises nothing, so nothing else clears what
//!   it leaves; the report of a finding, libFuzzer and the next input then
//!   never meet it.
//!
//! Unpoisoning stack memory below the current frame is always safe: no live
//! frame is there. Above it (a raise's), it is what AddressSanitizer's own
//! longjmp handling does.
//!
//! Not covered: in the input that did it, what follows a `break` or
//! `throw` out of instrumented frames (the garbage collector's
//! `clock_gettime`, on a stack `timespec`) can still meet their poisoning.
//! The interpreter's only event after such a jump is a C method's return,
//! and an event hook there costs every C method call about half a
//! microsecond (measured: 4 million calls of `String#index`, 3.5 s ->
//! 6 s), for a jump no faster way tells apart.
//!
//! Invariants: a no-op without AddressSanitizer; allocates nothing, takes
//! no lock, runs no Ruby code.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The entry points of the AddressSanitizer runtime loaded in the process.
struct Asan {
    handle_no_return: unsafe extern "C" fn(),
    unpoison: unsafe extern "C" fn(*const c_void, usize),
    /// `__asan_get_current_fake_stack`: non-null while stack-use-after-return
    /// detection keeps frames on a fake stack, which only
    /// `__asan_handle_no_return` knows how to clear.
    fake_stack: Option<unsafe extern "C" fn() -> *mut c_void>,
}

static ASAN: OnceLock<Option<Asan>> = OnceLock::new();

fn asan() -> Option<&'static Asan> {
    ASAN.get_or_init(|| {
        let handle_no_return = crate::rb::dl::lookup(c"__asan_handle_no_return")?;
        let unpoison = crate::rb::dl::lookup(c"__asan_unpoison_memory_region")?;
        let fake_stack = crate::rb::dl::lookup(c"__asan_get_current_fake_stack");
        // SAFETY: the addresses of the sanitizer interface functions of these
        // names (sanitizer/asan_interface.h), found in the loaded runtime.
        unsafe {
            Some(Asan {
                handle_no_return: std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(
                    handle_no_return,
                ),
                unpoison: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*const c_void, usize),
                >(unpoison),
                fake_stack: fake_stack.map(|function| {
                    std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> *mut c_void>(
                        function,
                    )
                }),
            })
        }
    })
    .as_ref()
}

impl Asan {
    /// Unpoisons `[bottom, top)`.
    fn unpoison(&self, bottom: usize, top: usize) {
        if top > bottom {
            // SAFETY: clears the shadow of an address range; the runtime
            // neither reads nor writes the range itself.
            unsafe { (self.unpoison)(bottom as *const c_void, top - bottom) };
        }
    }

    fn fake_stack_in_use(&self) -> bool {
        // SAFETY: returns the calling thread's fake stack, or null.
        self.fake_stack
            .is_some_and(|function| !unsafe { function() }.is_null())
    }
}

const PAGE: usize = 4096;

/// How far below the caller a raise's clearing reaches: the frames of the
/// interpreter's raise and of AddressSanitizer's own functions run there.
const BELOW_RAISE: usize = 64 << 10;

/// How far below the callback [`clear_below`] reaches at least, when no
/// deeper point is known (C code built without `fuzzer-no-link` does not
/// record it).
const BELOW_CALLBACK: usize = 256 << 10;

/// How far below the deepest point an instrumented function recorded
/// (its frame address) its own locals and redzones may reach.
const BELOW_DEEPEST: usize = 64 << 10;

/// How far below a fiber switch its clearing reaches. A fiber abandoned
/// while suspended left the poisoning of its live frames above the point
/// where it switched away, usually far less deep than this; clearing a
/// fiber's whole stack (512 KiB by default) at every switch would cost
/// `Enumerator#next` more than the switch itself.
const BELOW_SWITCH: usize = 128 << 10;

/// The largest stack these clearings believe: what AddressSanitizer's own
/// `__asan_handle_no_return` accepts.
const MAX_STACK: usize = 64 << 20;

/// The deepest an input believably goes below the callback: twice the main
/// thread's usual stack limit (8 MiB). The lowest stack libFuzzer keeps is
/// per thread, not per stack: a fiber's stack, elsewhere in memory, can
/// hold it.
const MAX_DEPTH: usize = 16 << 20;

/// An address in the frame of the caller's callee: the caller's stack
/// pointer, near enough.
#[inline(never)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::ptr::from_ref(std::hint::black_box(&marker)) as usize
}

/// An address on the fuzzing thread's own stack (the callback's frame, as
/// [`clear_below`] last saw it; 0 before the first input).
static FUZZING_STACK: AtomicUsize = AtomicUsize::new(0);

/// Whether `address` is on the fuzzing thread's own stack (believed so
/// before the first input), not on a fiber's stack elsewhere in memory.
fn on_thread_stack(address: usize) -> bool {
    let anchor = FUZZING_STACK.load(Ordering::Relaxed);
    anchor == 0 || address.abs_diff(anchor) <= MAX_STACK
}

/// `Ruzzy::Native._asan_present?`: whether AddressSanitizer is in the process.
pub fn asan_present() -> bool {
    asan().is_some()
}

/// `Ruzzy::Native._clear_stack_poisoning`, called when Ruby raises:
/// unpoisons the stack the raise abandons, on a thread's stack or a
/// fiber's.
pub fn clear_stack_poisoning() {
    let Some(asan) = asan() else { return };
    let here = stack_address();
    let bottom = here.saturating_sub(BELOW_RAISE) & !(PAGE - 1);
    let top = crate::rb::machine_stack_top();
    let on_thread_stack = on_thread_stack(here);
    if top > here && top - here <= MAX_STACK {
        asan.unpoison(bottom, top);
    } else {
        // Ruby's idea of the stack is not believable: AddressSanitizer's
        // own clearing, after the window below that its functions use;
        // on a fiber's stack (Ruby 3.3 gave the thread's top there), which
        // AddressSanitizer refuses to clear (and warns of false reports),
        // the window below only.
        asan.unpoison(bottom, here);
        if on_thread_stack {
            // SAFETY: __asan_handle_no_return(void), of the loaded runtime.
            unsafe { (asan.handle_no_return)() };
        }
        return;
    }
    if on_thread_stack && asan.fake_stack_in_use() {
        // SAFETY: as above; it also releases the fake frames jumped over.
        unsafe { (asan.handle_no_return)() };
    }
}

/// `Ruzzy::Native._clear_fiber_stack(size)`, when a fiber starts or
/// resumes: unpoisons the dead part of the machine stack it runs on below
/// the caller, [`BELOW_SWITCH`] deep but not past `size` bytes below the
/// top (Ruby's machine stack size for fibers). On a thread's own stack,
/// that is dead stack too.
pub fn clear_fiber_stack(size: usize) {
    let Some(asan) = asan() else { return };
    let here = stack_address();
    let top = crate::rb::machine_stack_top();
    if top > here && top - here <= MAX_STACK {
        let bottom = top
            .saturating_sub(size.min(MAX_STACK))
            .max(here.saturating_sub(BELOW_SWITCH));
        asan.unpoison(bottom & !(PAGE - 1), here);
    }
}

/// Unpoisons the dead stack below the caller (on the fuzzing thread, after
/// the target ran): down to [`BELOW_DEEPEST`] under `deepest` (the lowest
/// frame address an instrumented function recorded during the input, when
/// known and on this stack), and at least [`BELOW_CALLBACK`] down; up to
/// the end of the caller's page (the frames above the target's, ruzzy's and
/// libFuzzer's, are never instrumented, so nothing of theirs is poisoned).
pub fn clear_below(deepest: Option<usize>) {
    let Some(asan) = asan() else { return };
    let here = stack_address();
    FUZZING_STACK.store(here, Ordering::Relaxed);
    let deepest = deepest
        .filter(|&deepest| deepest < here && here - deepest <= MAX_DEPTH)
        .map_or(here, |deepest| deepest.saturating_sub(BELOW_DEEPEST));
    let bottom = deepest.min(here.saturating_sub(BELOW_CALLBACK)) & !(PAGE - 1);
    asan.unpoison(bottom, (here | (PAGE - 1)) + 1);
}

//! Switching the coverage events of single instruction sequences off and on
//! again: the interpreter's side of quiet coverage (`coverage::quiet`).
//!
//! Ruby compiles a coverage event as a `trace_` variant of an instruction
//! (vm_insnhelper.c `vm_trace`). `rb_iseq_trace_set(iseq, events)` (iseq.c,
//! the same in 3.1.2, 3.3.8 and 3.4.5) stores `events` as the iseq's
//! `global_trace_events` and turns the instructions of those events into
//! `trace_` variants, but it keeps every `trace_` instruction there is
//! (`encoded_iseq_trace_instrument(..., remain_current_trace = true)`): it
//! can switch events on, never off. Only removing a targeted TracePoint
//! (`iseq_remove_local_tracepoint`, through `TracePoint#disable`) rebuilds an
//! iseq's instructions from scratch, from its local hooks' events and its
//! `global_trace_events`. So an iseq's coverage is switched off in two
//! steps: `rb_iseq_trace_set(iseq, its events minus the coverage events)`,
//! then a TracePoint enabled on it (`enable(target:)`) and disabled at once
//! (the caller's `rebuild` callable); every other event (a debugger's line
//! events, a targeted TracePoint of the user's) stays. The caller may then
//! keep some instructions traced (the arms that never ran): each gets back
//! the word it held before, which is what Ruby itself writes there when the
//! event is on. Switching on is `rb_iseq_trace_set` with the coverage
//! events added.
//!
//! `rb_iseq_trace_set` and `rb_iseqw_new` are exported by libruby (3.1 to
//! 3.4) but declared only in internal headers, and `rb_objspace_each_objects`
//! (how the iseqs are found: Ruby's own `rb_iseq_trace_set_all` walks the
//! heap the same way) is not in the public headers either: all three are
//! looked up with `dlsym`, and quiet coverage is unavailable without them.
//!
//! Under YJIT, compiled code does not read the instruction buffer: an iseq
//! switched on with `rb_iseq_trace_set` alone would run its compiled code
//! untraced. So under YJIT ([`set_jit`]) switching on rebuilds too, which
//! throws all compiled code away (`rb_yjit_tracing_invalidate_all`, as any
//! targeted TracePoint does); on Ruby 3.1, whose YJIT never compiles again an
//! iseq it threw away, every such iseq's call count is reset after a batch
//! (`interpreter_layout::allow_jit_again`), as 3.3 does by itself.
//!
//! Invariants: never inside an event hook (the caller runs between inputs,
//! on the thread holding the GVL); the GC is disabled from the heap walk to
//! the last switch, so the iseqs found stay where they are and alive; the
//! `rebuild` callable runs under `rb_protect`; the instructions kept traced
//! ([`KEPT`]) are read and written only there, and only in iseqs the walk
//! found alive, where the untraced word recorded is still in place; a
//! YJIT call count is written only in an iseq a heap walk found alive with
//! the GC still off.

use crate::rb::{self, dl, interpreter_layout};
use rb_sys::VALUE;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// YJIT compiles the process's code: switching on rebuilds as well.
static JIT: AtomicBool = AtomicBool::new(false);
/// Ruby 3.1 under YJIT, its call counts checked: reset after a batch.
static JIT_AGAIN: AtomicBool = AtomicBool::new(false);

/// Under YJIT (`jit`), and whether the call counts of the iseqs YJIT threw
/// away are reset after each batch (`again`: Ruby 3.1, checked by the caller
/// with `interpreter_layout::jit_calls`).
pub fn set_jit(jit: bool, again: bool) {
    JIT.store(jit, Relaxed);
    JIT_AGAIN.store(jit && again, Relaxed);
}

/// `RUBY_EVENT_COVERAGE_LINE | RUBY_EVENT_COVERAGE_BRANCH` (vm_core.h).
pub const COVERAGE_EVENTS: u32 = 0x01_0000 | 0x02_0000;

type TraceSet = unsafe extern "C" fn(iseq: VALUE, events: u32);
type IseqWrapper = unsafe extern "C" fn(iseq: VALUE) -> VALUE;
type EachObjectsCallback = unsafe extern "C" fn(
    start: *mut c_void,
    end: *mut c_void,
    stride: usize,
    data: *mut c_void,
) -> c_int;
type EachObjects = unsafe extern "C" fn(callback: EachObjectsCallback, data: *mut c_void);

struct Functions {
    trace_set: TraceSet,
    wrapper: IseqWrapper,
    each_objects: EachObjects,
}

static FUNCTIONS: OnceLock<Option<Functions>> = OnceLock::new();

fn functions() -> Option<&'static Functions> {
    FUNCTIONS
        .get_or_init(|| {
            let trace_set = dl::lookup(c"rb_iseq_trace_set")?;
            let wrapper = dl::lookup(c"rb_iseqw_new")?;
            let each_objects = dl::lookup(c"rb_objspace_each_objects")?;
            // SAFETY: the interpreter's own functions, with the signatures of
            // iseq.c (`void rb_iseq_trace_set(const rb_iseq_t *, rb_event_flag_t)`,
            // `VALUE rb_iseqw_new(const rb_iseq_t *)`) and gc.c
            // (`void rb_objspace_each_objects(each_obj_callback *, void *)`).
            unsafe {
                Some(Functions {
                    trace_set: std::mem::transmute::<*mut c_void, TraceSet>(trace_set),
                    wrapper: std::mem::transmute::<*mut c_void, IseqWrapper>(wrapper),
                    each_objects: std::mem::transmute::<*mut c_void, EachObjects>(each_objects),
                })
            }
        })
        .as_ref()
}

/// Why iseqs cannot be switched on this Ruby, or None when they can.
pub fn unavailable() -> Option<&'static str> {
    if interpreter_layout::NAME.is_none() {
        Some("no interpreter layout for this Ruby")
    } else if functions().is_none() {
        Some("this Ruby does not export rb_iseq_trace_set, rb_iseqw_new and rb_objspace_each_objects")
    } else {
        None
    }
}

/// What happened to one iseq asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switched {
    /// Its coverage events are now as asked.
    Done,
    /// Its coverage events already were as asked.
    Already,
    /// It could not be switched off (the rebuild raised, or the events read
    /// back are not the ones written); it was left as it was.
    Failed,
}

/// The instructions switched-off iseqs keep traced: by body, the buffer
/// and its length, then (index, traced word, untraced word) for each.
type KeptArms = HashMap<usize, (usize, usize, Vec<(usize, VALUE, VALUE)>)>;

/// Touched only by [`switch`] (between inputs, with the GVL).
static KEPT: Mutex<Option<KeptArms>> = Mutex::new(None);

/// Switches the coverage events of the live iseqs `wanted` picks (by the
/// address of their body; Some(true): off, Some(false): on) and calls
/// `done` with each one's body, instruction buffer, whether it was asked off,
/// and the outcome. Switching off, an instruction that was traced stays
/// traced when `keep` (body, instruction buffer, its index) says so; a
/// rebuild undoes that in the iseq's children too (a TracePoint enabled on
/// an iseq is enabled on its blocks and methods), so every live iseq's
/// kept instructions are written again last. `rebuild` is a callable that
/// enables a TracePoint on the `RubyVM::InstructionSequence` it is given
/// and disables it again, answering false when Ruby refused. Returns false
/// when this Ruby cannot switch iseqs ([`unavailable`]); else the number
/// of instructions kept traced.
pub fn switch(
    rebuild: VALUE,
    mut wanted: impl FnMut(usize) -> Option<bool>,
    mut keep: impl FnMut(usize, usize, usize) -> bool,
    mut done: impl FnMut(usize, usize, bool, Switched),
) -> Option<usize> {
    let functions = functions()?;
    interpreter_layout::NAME?;
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let kept = kept.get_or_insert_with(HashMap::new);
    // SAFETY: between inputs with the GVL (module invariant); GC.disable
    // answers whether it already was.
    let was_disabled = unsafe { rb_sys::rb_gc_disable() } == rb_sys::Qtrue as VALUE;
    let mut found: Vec<(VALUE, usize, usize, usize, bool)> = Vec::new();
    let mut live: HashSet<(usize, usize, usize)> = HashSet::new();
    let mut visit = |value: VALUE| {
        // SAFETY: a live slot handed over by the heap walk.
        if let Some((body, encoded, size)) = unsafe { interpreter_layout::executable_iseq(value) } {
            if let Some(off) = wanted(body) {
                found.push((value, body, encoded, size, off));
            }
            if kept.contains_key(&body) {
                live.insert((body, encoded, size));
            }
        }
    };
    // SAFETY: `visit` runs no Ruby code and allocates no Ruby object.
    unsafe { walk_heap(functions, &mut visit) };
    // What is not alive any more keeps nothing.
    kept.retain(|body, (encoded, size, _)| live.contains(&(*body, *encoded, *size)));
    for (iseq, body, encoded, size, off) in found {
        // SAFETY: GC is off since the walk found `iseq`: it is alive and in
        // place, and its instruction buffer holds `size` words.
        let before = off
            .then(|| unsafe { std::slice::from_raw_parts(encoded as *const VALUE, size) }.to_vec());
        // SAFETY: as above.
        let outcome = unsafe { switch_one(functions, rebuild, iseq, off) };
        kept.remove(&body);
        // SAFETY: as above; read again after the rebuild ran Ruby code.
        let same_buffer =
            unsafe { interpreter_layout::executable_iseq(iseq) } == Some((body, encoded, size));
        if let (Some(before), Switched::Done, true) = (before, outcome, same_buffer) {
            // SAFETY: as above (the same buffer, rebuilt in place); a word
            // that changed is an instruction's (its operands stay).
            let after = unsafe { std::slice::from_raw_parts(encoded as *const VALUE, size) };
            let arms: Vec<(usize, VALUE, VALUE)> = (0..size)
                .filter(|&pos| after[pos] != before[pos] && keep(body, encoded, pos))
                .map(|pos| (pos, before[pos], after[pos]))
                .collect();
            if !arms.is_empty() {
                kept.insert(body, (encoded, size, arms));
            }
        }
        done(body, encoded, off, outcome);
    }
    if JIT_AGAIN.load(Relaxed) {
        let mut again = |value: VALUE| {
            // SAFETY: a live slot handed over by the heap walk (GC still off).
            if let Some((body, _, _)) = unsafe { interpreter_layout::executable_iseq(value) } {
                // SAFETY: the body of that live executable iseq, with the GVL.
                unsafe { interpreter_layout::allow_jit_again(body) };
            }
        };
        // SAFETY: as for the walk above.
        unsafe { walk_heap(functions, &mut again) };
    }
    let mut written = 0;
    for (encoded, size, arms) in kept.values() {
        // SAFETY: each is a live iseq's buffer of `size` words (the walk
        // found it with GC off, and what it no longer found was dropped);
        // a word is written only where the untraced instruction recorded
        // is still there, with its traced variant, which is what Ruby
        // writes there when the event is on.
        let instructions = unsafe { std::slice::from_raw_parts_mut(*encoded as *mut VALUE, *size) };
        for &(pos, traced, untraced) in arms {
            if instructions[pos] == untraced {
                instructions[pos] = traced;
            }
            written += 1;
        }
    }
    if !was_disabled {
        // SAFETY: as above; GC was enabled before this call.
        unsafe { rb_sys::rb_gc_enable() };
    }
    Some(written)
}

/// # Safety
/// `iseq` is a live executable iseq (GC disabled since it was found).
unsafe fn switch_one(functions: &Functions, rebuild: VALUE, iseq: VALUE, off: bool) -> Switched {
    // SAFETY: by the caller's contract.
    let events = unsafe { interpreter_layout::iseq_trace_events(iseq) };
    if !off {
        if events & COVERAGE_EVENTS == COVERAGE_EVENTS {
            return Switched::Already;
        }
        // SAFETY: as above; only adds events, as `rb_iseq_trace_set_all` does.
        unsafe { (functions.trace_set)(iseq, events | COVERAGE_EVENTS) };
        // Under YJIT the rebuild also throws away the compiled code that
        // would run untraced; what it rebuilds keeps the events just set.
        if JIT.load(Relaxed) {
            // SAFETY: as above.
            unsafe { rebuild_one(functions, rebuild, iseq) };
        }
        return Switched::Done;
    }
    // Already without coverage events, it may still have instructions
    // kept traced that have fired since: rebuilt all the same.
    let quiet = events & !COVERAGE_EVENTS;
    if quiet != events {
        // SAFETY: as above; the instructions stay as they are until the rebuild.
        unsafe { (functions.trace_set)(iseq, quiet) };
        // SAFETY: as above.
        if unsafe { interpreter_layout::iseq_trace_events(iseq) } != quiet {
            // What the layout reads is not what Ruby wrote: put it back.
            // SAFETY: as above.
            unsafe { (functions.trace_set)(iseq, events) };
            return Switched::Failed;
        }
    }
    // SAFETY: as above.
    if unsafe { rebuild_one(functions, rebuild, iseq) } {
        return Switched::Done;
    }
    // SAFETY: as above: the events it had (its instructions were not rebuilt).
    unsafe { (functions.trace_set)(iseq, events) };
    Switched::Failed
}

/// Calls `rebuild` with `iseq`'s wrapper: a TracePoint enabled on it and
/// disabled again, which rebuilds its instructions from its events; answers
/// whether Ruby did.
///
/// # Safety
/// As [`switch_one`].
unsafe fn rebuild_one(functions: &Functions, rebuild: VALUE, iseq: VALUE) -> bool {
    let rebuilt = rb::protect(|ruby| {
        // SAFETY: by the caller's contract; allocates the iseq's wrapper once
        // (Ruby keeps it in the iseq).
        let wrapper = unsafe { (functions.wrapper)(iseq) };
        ruby.call(rebuild, rb::intern(c"call"), &[wrapper])
    });
    matches!(rebuilt, Ok(answer) if rb::value::truthy(answer))
}

/// Hands every slot of the heap to `visit` (`rb_objspace_each_objects`).
///
/// # Safety
/// Between inputs with the GVL; `visit` runs no Ruby code and allocates no
/// Ruby object.
unsafe fn walk_heap(functions: &Functions, mut visit: &mut dyn FnMut(VALUE)) {
    // SAFETY: by the caller's contract; the walk calls `each_slot` with the
    // heap's pages while `visit` lives.
    unsafe {
        (functions.each_objects)(
            each_slot,
            &mut visit as *mut &mut dyn FnMut(VALUE) as *mut c_void,
        )
    };
}

/// The heap walk's callback: every slot of one page, to `data`'s closure.
unsafe extern "C" fn each_slot(
    start: *mut c_void,
    end: *mut c_void,
    stride: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the closure `walk_heap` passed, alive during the walk.
    let visit = unsafe { &mut *(data as *mut &mut dyn FnMut(VALUE)) };
    let mut slot = start as usize;
    while slot < end as usize && stride > 0 {
        visit(slot as VALUE);
        slot += stride;
    }
    0
}

//! The interpreter's private structures that precise locations read, one
//! layout per Ruby minor version, each taken from that version's headers.
//!
//! | Ruby | headers read | differences that matter here |
//! |---|---|---|
//! | 3.1 | 3.1.2 `vm_core.h` (Debian 12 source) | `first_lineno` is a `VALUE`; the control frame has `__bp__` (8 words); `rb_thread_t` has no `nt`; the iseq body's YJIT call count is written ([`allow_jit_again`]) |
//! | 3.3 | 3.3.8 `vm_core.h` (Debian sid source) | `first_lineno` is an `int`; 7-word control frame; `rb_thread_t.nt` before `ec` |
//! | 3.4 | 3.4.0 `vm_core.h` (bindgen output of the real headers), `iseq.c` | as 3.3 for every struct read while fuzzing; a `RubyVM::InstructionSequence` holds a pointer to its iseq (`TypedData_Make_Struct(..., rb_iseq_t *, ...)`) rather than being one |
//!
//! The running ractor's list of global event hooks (`rb_ractor_pub`,
//! `rb_hook_list_t`, `rb_event_hook_t`) is the same in 3.1 to 3.4, and so
//! are `rb_iseq_t`'s `aux.exec.global_trace_events` (read by quiet
//! coverage, `coverage::quiet`) and the flags that say an iseq is
//! executable (iseq.h, internal/imemo.h of 3.1.2, 3.3.8 and 3.4.5).
//!
//! Only the fields up to the last one read are declared; the rest of each
//! struct is never touched. build.rs sets `ruby_layout` to `"3.1"`, `"3.3"`
//! or `"3.4"` from the Ruby being built for; any other
//! version (3.0, 3.2, 3.5 previews, 4.0) compiles none of this and gets
//! the public API. `location` checks the layout against the public API
//! on the first event before trusting it, and `probe_iseq` lets the test
//! suite compare every field read here with `RubyVM::InstructionSequence`.
//!
//! Invariants: no allocation, no lock; every pointer is checked for null
//! (and the frame for being a Ruby frame) before it is followed.

use rb_sys::VALUE;

/// A frame's instruction sequence as located by the layout.
pub struct FrameInfo {
    /// The source path String (the iseq's `pathobj`, or its first element).
    pub path: VALUE,
    /// The iseq body (malloc'd: never moved by GC compaction).
    pub body: usize,
    /// The instruction buffer (malloc'd).
    pub encoded: usize,
    /// Where the iseq's code starts: line and column.
    pub beg_line: i32,
    pub beg_column: i32,
    /// The program counter's offset in the instruction buffer.
    pub offset: u64,
}

/// A Ruby frame of the running thread, for backtraces taken without
/// Ruby's help (signal handlers).
pub struct StackFrame {
    /// The frame's `rb_iseq_t`.
    pub iseq: *const std::ffi::c_void,
    /// The instruction the frame is at (Ruby's `calc_pos`: one before pc).
    pub position: usize,
    /// The source path and label Strings.
    pub path: VALUE,
    pub label: VALUE,
    /// Where the frame sits on the VM stack: frames it called have lower
    /// addresses (compare with [`current_frame`]).
    pub cfp: usize,
}

/// One global event hook as the layout reads it (`rb_event_hook_t`).
pub struct EventHookEntry {
    /// `RUBY_EVENT_HOOK_FLAG_*`.
    pub flags: u32,
    pub events: u32,
    /// The hook function (`rb_event_hook_func_t`).
    pub func: *const std::ffi::c_void,
    pub data: VALUE,
}

/// What the layout reads from one iseq, for cross-checking in tests.
pub struct IseqFields {
    pub wrapper_matches: bool,
    pub kind: u32,
    pub path: VALUE,
    pub label: VALUE,
    pub base_label: VALUE,
    pub first_lineno: i64,
    pub node_id: i32,
    pub code_location: [i32; 4],
}

/// The name of the layout compiled in, or None (public API only).
pub const NAME: Option<&str> = if cfg!(ruby_layout = "3.1") {
    Some("3.1")
} else if cfg!(ruby_layout = "3.3") {
    Some("3.3")
} else if cfg!(ruby_layout = "3.4") {
    Some("3.4")
} else {
    None
};

#[cfg(any(ruby_layout = "3.1", ruby_layout = "3.3", ruby_layout = "3.4"))]
// Fields that are never read still place the ones that are.
#[allow(dead_code)]
mod known {
    use super::{FrameInfo, IseqFields};
    use rb_sys::{rb_trace_arg_t, ruby_value_type, VALUE};

    /// `rb_trace_arg_t` (vm_core.h), same in 3.1 to 3.4.
    #[repr(C)]
    struct TraceArg {
        event: u32,
        ec: *const ExecutionContext,
        cfp: *const ControlFrame,
    }

    /// `rb_control_frame_t`: pc, sp, iseq, self, ep, block_code, then
    /// `__bp__` and `jit_return` (3.1) or `jit_return` (3.3, 3.4).
    #[repr(C)]
    struct ControlFrame {
        pc: *const VALUE,
        sp: *const VALUE,
        iseq: *const Iseq,
        self_: VALUE,
        ep: *const VALUE,
        block_code: *const u8,
        #[cfg(ruby_layout = "3.1")]
        bp: *const VALUE,
        jit_return: *const u8,
    }

    /// `rb_execution_context_t`, leading fields (same in 3.1 to 3.4).
    #[repr(C)]
    struct ExecutionContext {
        vm_stack: *const VALUE,
        vm_stack_size: usize,
        cfp: *const ControlFrame,
    }

    /// `rb_thread_t`, leading fields: `lt_node` (two pointers), self,
    /// ractor, vm, (3.3+) nt, ec.
    #[repr(C)]
    struct Thread {
        lt_node: [usize; 2],
        self_: VALUE,
        ractor: *const u8,
        vm: *const u8,
        #[cfg(any(ruby_layout = "3.3", ruby_layout = "3.4"))]
        nt: *const u8,
        ec: *const ExecutionContext,
    }

    /// `struct rb_ractor_pub`, the leading member of `rb_ractor_t`
    /// (vm_core.h, ractor_core.h; same in 3.1 to 3.4).
    #[repr(C)]
    struct RactorPub {
        self_: VALUE,
        id: u32,
        hooks: HookList,
    }

    /// `rb_hook_list_t` (vm_core.h; same in 3.1 to 3.4).
    #[repr(C)]
    struct HookList {
        hooks: *const EventHook,
        events: u32,
        running: u32,
        need_clean: bool,
        is_local: bool,
    }

    /// `rb_event_hook_t` (vm_trace.c; same in 3.1 to 3.4), leading fields.
    #[repr(C)]
    struct EventHook {
        hook_flags: u32,
        events: u32,
        func: *const std::ffi::c_void,
        data: VALUE,
        next: *const EventHook,
    }

    /// `rb_iseq_t` (`struct rb_iseq_struct`, vm_core.h, the same in 3.1 to
    /// 3.4): flags, wrapper, body, then the union `aux`, whose `exec` arm
    /// (an executable iseq's) is `{local_hooks*, global_trace_events}`.
    #[repr(C)]
    struct Iseq {
        flags: VALUE,
        wrapper: VALUE,
        body: *const IseqBody,
        local_hooks: *const u8,
        global_trace_events: u32,
    }

    /// `ISEQ_NOT_LOADED_YET | ISEQ_USE_COMPILE_DATA` (iseq.h: IMEMO_FL_USER1
    /// and IMEMO_FL_USER2, that is FL_USER5 and FL_USER6 with FL_USHIFT 12;
    /// the same in 3.1 to 3.4): an iseq being compiled or not loaded yet,
    /// whose `aux` is not the `exec` arm (`ISEQ_EXECUTABLE_P`).
    const ISEQ_NOT_EXECUTABLE: VALUE = (1 << 17) | (1 << 18);

    /// `struct rb_iseq_constant_body` up to `location.code_location`.
    /// `param` is 48 bytes in 3.1 to 3.4: a 4-byte flags bitfield, 7
    /// ints, then the `opt_table` and `keyword` pointers.
    #[repr(C)]
    struct IseqBody {
        kind: u32,
        iseq_size: u32,
        iseq_encoded: *const VALUE,
        param: [u64; 6],
        pathobj: VALUE,
        base_label: VALUE,
        label: VALUE,
        #[cfg(ruby_layout = "3.1")]
        first_lineno: VALUE,
        #[cfg(any(ruby_layout = "3.3", ruby_layout = "3.4"))]
        first_lineno: i32,
        node_id: i32,
        beg_line: i32,
        beg_column: i32,
        end_line: i32,
        end_column: i32,
    }

    /// `imemo_iseq` in `enum imemo_type` (internal/imemo.h), 3.1 to 3.4.
    const IMEMO_ISEQ: VALUE = 7;
    const IMEMO_MASK: VALUE = 0xf;
    const IMEMO_SHIFT: u32 = 12;

    impl IseqBody {
        fn first_lineno(&self) -> Option<i64> {
            #[cfg(ruby_layout = "3.1")]
            {
                if rb_sys::FIXNUM_P(self.first_lineno) {
                    // SAFETY: checked to be a Fixnum.
                    Some(unsafe { rb_sys::FIX2LONG(self.first_lineno) })
                } else {
                    None
                }
            }
            #[cfg(any(ruby_layout = "3.3", ruby_layout = "3.4"))]
            {
                Some(i64::from(self.first_lineno))
            }
        }

        /// The path String of `pathobj` (a String, or [path, realpath]).
        unsafe fn path(&self) -> VALUE {
            // SAFETY: by the caller's contract, the body belongs to a live iseq.
            unsafe {
                if rb_sys::RB_TYPE_P(self.pathobj, ruby_value_type::RUBY_T_ARRAY) {
                    rb_sys::RARRAY_AREF(self.pathobj, 0)
                } else {
                    self.pathobj
                }
            }
        }
    }

    /// The frame of a live control frame pointer, if it runs Ruby code
    /// (its iseq slot holds an imemo_iseq and its pc lies inside it).
    unsafe fn frame(cfp: *const ControlFrame, strict: bool) -> Option<FrameInfo> {
        // SAFETY: by the caller's contract, `cfp` points into the VM stack of a live
        // execution context; each pointer is checked before use.
        unsafe {
            if cfp.is_null() {
                return None;
            }
            let iseq = (*cfp).iseq;
            let pc = (*cfp).pc;
            if iseq.is_null() || pc.is_null() || rb_sys::SPECIAL_CONST_P(iseq as VALUE) {
                return None;
            }
            // A C method's frame holds a method entry (imemo_ment) there.
            if strict
                && (!rb_sys::RB_TYPE_P(iseq as VALUE, ruby_value_type::RUBY_T_IMEMO)
                    || ((*iseq).flags >> IMEMO_SHIFT) & IMEMO_MASK != IMEMO_ISEQ)
            {
                return None;
            }
            let body = (*iseq).body;
            if body.is_null() {
                return None;
            }
            let encoded = (*body).iseq_encoded;
            if strict && (pc < encoded || pc >= encoded.add((*body).iseq_size as usize)) {
                return None;
            }
            Some(FrameInfo {
                path: (*body).path(),
                body: body as usize,
                encoded: encoded as usize,
                beg_line: (*body).beg_line,
                beg_column: (*body).beg_column,
                offset: pc.offset_from(encoded) as u64,
            })
        }
    }

    /// `value` as an executable iseq (an imemo_iseq whose `aux` is the
    /// `exec` arm and which has a body): its body, instruction buffer and
    /// the buffer's length in words (`iseq_size`). `value` must be a live
    /// heap slot (as the object space walk hands them over), of any type.
    pub unsafe fn executable_iseq(value: VALUE) -> Option<(usize, usize, usize)> {
        // SAFETY: by the caller's contract, a live heap slot; the type and the
        // flags are checked before the iseq's fields are read.
        unsafe {
            if rb_sys::SPECIAL_CONST_P(value)
                || !rb_sys::RB_TYPE_P(value, ruby_value_type::RUBY_T_IMEMO)
            {
                return None;
            }
            let iseq = value as *const Iseq;
            if ((*iseq).flags >> IMEMO_SHIFT) & IMEMO_MASK != IMEMO_ISEQ
                || (*iseq).flags & ISEQ_NOT_EXECUTABLE != 0
                || (*iseq).body.is_null()
            {
                return None;
            }
            let body = (*iseq).body;
            Some((
                body as usize,
                (*body).iseq_encoded as usize,
                (*body).iseq_size as usize,
            ))
        }
    }

    /// The events an executable iseq is compiled with for the global hooks
    /// (`aux.exec.global_trace_events`, which `rb_iseq_trace_set` writes).
    pub unsafe fn iseq_trace_events(iseq: VALUE) -> u32 {
        // SAFETY: by the caller's contract, `executable_iseq(iseq)` said yes
        // and nothing ran since.
        unsafe { (*(iseq as *const Iseq)).global_trace_events }
    }

    /// The `global_trace_events` of the iseq a coverage event fired in.
    pub unsafe fn event_trace_events(arg: *mut rb_trace_arg_t) -> Option<u32> {
        // SAFETY: by the caller's contract, as for `event_frame`: the frame of
        // a coverage event runs an executable iseq.
        unsafe {
            let cfp = (*(arg as *const TraceArg)).cfp;
            if cfp.is_null() || (*cfp).iseq.is_null() {
                return None;
            }
            Some((*(*cfp).iseq).global_trace_events)
        }
    }

    /// The frame of a coverage event (always a Ruby frame).
    #[inline(always)]
    pub unsafe fn event_frame(arg: *mut rb_trace_arg_t) -> Option<FrameInfo> {
        // SAFETY: by the caller's contract, `arg` is the live trace argument of a RAW_ARG
        // hook; coverage events fire only from iseq code.
        unsafe { frame((*(arg as *const TraceArg)).cfp, false) }
    }

    /// The running thread's execution context, found through the public
    /// `rb_thread_current()` (Ruby 3.3 and later export no thread-local
    /// for it) and checked: the thread struct must point back to itself.
    #[inline(always)]
    unsafe fn current_ec() -> *const ExecutionContext {
        // SAFETY: by the caller's contract, GVL held; a Thread object's typed data is its
        // rb_thread_t.
        unsafe {
            let thread = rb_sys::rb_thread_current();
            let th = rb_sys::RTYPEDDATA_GET_DATA(thread) as *const Thread;
            if th.is_null() || (*th).self_ != thread {
                return std::ptr::null();
            }
            (*th).ec
        }
    }

    /// Calls `each` with every event hook of the running ractor's global
    /// list, unless the layout does not check out: the running thread's
    /// ractor must be `ractor` (the `Ractor.current` object). Returns
    /// whether the list was read. The list must not change while `each`
    /// runs.
    pub unsafe fn each_global_hook(
        ractor: VALUE,
        mut each: impl FnMut(super::EventHookEntry),
    ) -> bool {
        // SAFETY: by the caller's contract, GVL held; the thread and ractor
        // are checked to point back to their objects before the list is read.
        unsafe {
            let thread = rb_sys::rb_thread_current();
            let th = rb_sys::RTYPEDDATA_GET_DATA(thread) as *const Thread;
            if th.is_null() || (*th).self_ != thread || (*th).ractor.is_null() {
                return false;
            }
            let public = (*th).ractor as *const RactorPub;
            if (*public).self_ != ractor {
                return false;
            }
            let mut hook = (*public).hooks.hooks;
            while !hook.is_null() {
                each(super::EventHookEntry {
                    flags: (*hook).hook_flags,
                    events: (*hook).events,
                    func: (*hook).func,
                    data: (*hook).data,
                });
                hook = (*hook).next;
            }
            true
        }
    }

    /// The Ruby frame that called the C method now running.
    #[inline(always)]
    pub unsafe fn caller_frame() -> Option<FrameInfo> {
        // SAFETY: by the caller's contract, inside a C method call, so the current frame is
        // its CFUNC frame and the one below it (the next higher address on
        // the VM stack) belongs to its caller.
        unsafe {
            let ec = current_ec();
            if ec.is_null() || (*ec).cfp.is_null() {
                return None;
            }
            let caller = (*ec).cfp.add(1);
            let stack_end = (*ec).vm_stack.add((*ec).vm_stack_size) as *const ControlFrame;
            if caller >= stack_end {
                return None;
            }
            frame(caller, true)
        }
    }

    /// Calls `each` for every Ruby frame of the running thread, outermost
    /// first. Reads memory only: no allocation, no lock, no Ruby call but
    /// `rb_thread_current` (a thread-local read), so a signal handler on the
    /// thread that holds the GVL may use it.
    pub unsafe fn each_ruby_frame(mut each: impl FnMut(super::StackFrame)) {
        // SAFETY: by the caller's contract, on a Ruby thread; frames between the context's
        // current frame and the end of its VM stack are live.
        unsafe {
            let ec = current_ec();
            if ec.is_null() || (*ec).cfp.is_null() || (*ec).vm_stack.is_null() {
                return;
            }
            let innermost = (*ec).cfp;
            let mut cfp = (*ec).vm_stack.add((*ec).vm_stack_size) as *const ControlFrame;
            while cfp > innermost {
                cfp = cfp.sub(1);
                let Some(frame) = frame(cfp, true) else {
                    continue;
                };
                let body = &*(frame.body as *const IseqBody);
                each(super::StackFrame {
                    iseq: (*cfp).iseq as *const std::ffi::c_void,
                    position: (frame.offset as usize).saturating_sub(1),
                    path: frame.path,
                    label: body.label,
                    cfp: cfp as usize,
                });
            }
        }
    }

    /// The running thread's current control frame (inside a C method: its
    /// own frame), as a [`super::StackFrame::cfp`] address; 0 when unknown.
    pub unsafe fn current_frame() -> usize {
        // SAFETY: by the caller's contract, on a Ruby thread holding the GVL.
        unsafe {
            let ec = current_ec();
            if ec.is_null() {
                0
            } else {
                (*ec).cfp as usize
            }
        }
    }

    /// Cross-checks an event's frame with the public API.
    pub unsafe fn agrees_with_public_api(arg: *mut rb_trace_arg_t) -> bool {
        // SAFETY: by the caller's contract, as for `event_frame`.
        unsafe {
            let Some(frame) = event_frame(arg) else {
                return false;
            };
            let body = &*(frame.body as *const IseqBody);
            let line = rb_sys::FIX2LONG(rb_sys::rb_tracearg_lineno(arg));
            frame.path == rb_sys::rb_tracearg_path(arg)
                && body.first_lineno().is_some_and(|first| first <= line)
                && i64::from(body.beg_line) <= line
                && line <= i64::from(body.end_line)
                && frame.offset < u64::from(body.iseq_size)
        }
    }

    /// The iseq a `RubyVM::InstructionSequence` wraps, if it has a body.
    unsafe fn wrapped_iseq(wrapper: VALUE) -> Option<*const Iseq> {
        // SAFETY: by the caller's contract, `wrapper` is a live RubyVM::InstructionSequence,
        // whose typed data is its rb_iseq_t (3.1, 3.3) or a pointer to it
        // (3.4).
        unsafe {
            let data = rb_sys::RTYPEDDATA_GET_DATA(wrapper);
            #[cfg(ruby_layout = "3.4")]
            let data = if data.is_null() {
                data
            } else {
                *(data as *const *mut std::ffi::c_void)
            };
            let iseq = data as *const Iseq;
            (!iseq.is_null() && !(*iseq).body.is_null()).then_some(iseq)
        }
    }

    /// Ruby 3.1's `struct rb_iseq_constant_body` ends with `jit_func` and
    /// `total_calls` (`#if USE_MJIT`, which Debian's build and a build from
    /// source have) at bytes 280 and 288, after `mandatory_only_iseq` (3.1.2
    /// vm_core.h, field by field from `kind`). YJIT compiles an iseq when
    /// `total_calls` reaches its threshold, exactly (mjit.h `mjit_exec`), and
    /// a TracePoint enabled anywhere clears every `jit_func` but keeps the
    /// count (yjit_codegen.c `invalidate_all_blocks_for_tracing`), so the
    /// iseq is never compiled again; 3.3 and 3.4 reset the count themselves
    /// (yjit.c `rb_iseq_reset_jit_func`).
    #[cfg(ruby_layout = "3.1")]
    const JIT_FUNC: usize = 280;
    #[cfg(ruby_layout = "3.1")]
    const TOTAL_CALLS: usize = 288;

    /// Ruby 3.1: the calls YJIT counted towards compiling the iseq a
    /// `RubyVM::InstructionSequence` wraps (for the check made before
    /// [`allow_jit_again`] is used); None on other Rubies.
    pub unsafe fn jit_calls(wrapper: VALUE) -> Option<u64> {
        #[cfg(ruby_layout = "3.1")]
        // SAFETY: by the caller's contract, a live wrapper; the body is
        // malloc'd and at least TOTAL_CALLS + 8 bytes long in 3.1.
        unsafe {
            let body = (*wrapped_iseq(wrapper)?).body as usize;
            Some(*((body + TOTAL_CALLS) as *const u64))
        }
        #[cfg(not(ruby_layout = "3.1"))]
        {
            let _ = wrapper;
            None
        }
    }

    /// Ruby 3.1: if YJIT threw away the compiled code of the iseq whose
    /// body is `body` (`jit_func` NULL), sets its call count back to 0 so
    /// that YJIT compiles it again, as 3.3 does. Does nothing on other
    /// Rubies.
    pub unsafe fn allow_jit_again(body: usize) {
        #[cfg(ruby_layout = "3.1")]
        // SAFETY: by the caller's contract, the body of a live executable
        // iseq (as `executable_iseq` returned it), with the GVL held.
        unsafe {
            if *((body + JIT_FUNC) as *const usize) == 0 {
                *((body + TOTAL_CALLS) as *mut u64) = 0;
            }
        }
        #[cfg(not(ruby_layout = "3.1"))]
        let _ = body;
    }

    /// Reads an iseq through the layout, starting from its
    /// `RubyVM::InstructionSequence` wrapper.
    pub unsafe fn probe_iseq(wrapper: VALUE) -> Option<IseqFields> {
        // SAFETY: by the caller's contract, `wrapper` is a live
        // RubyVM::InstructionSequence.
        unsafe {
            let iseq = wrapped_iseq(wrapper)?;
            let body = &*(*iseq).body;
            Some(IseqFields {
                wrapper_matches: (*iseq).wrapper == wrapper,
                kind: body.kind,
                path: body.path(),
                label: body.label,
                base_label: body.base_label,
                first_lineno: body.first_lineno()?,
                node_id: body.node_id,
                code_location: [
                    body.beg_line,
                    body.beg_column,
                    body.end_line,
                    body.end_column,
                ],
            })
        }
    }

    /// Reads the caller's frame and returns (path, first line, column) of
    /// its iseq, for cross-checking the thread, context and frame layouts.
    pub unsafe fn probe_caller() -> Option<(VALUE, i32, i32)> {
        // SAFETY: by the caller's contract, inside a C method call.
        unsafe { caller_frame().map(|frame| (frame.path, frame.beg_line, frame.beg_column)) }
    }
}

#[cfg(not(any(ruby_layout = "3.1", ruby_layout = "3.3", ruby_layout = "3.4")))]
mod known {
    //! No layout for this Ruby: nothing is read.
    use super::{FrameInfo, IseqFields};
    use rb_sys::{rb_trace_arg_t, VALUE};

    pub unsafe fn event_frame(_arg: *mut rb_trace_arg_t) -> Option<FrameInfo> {
        None
    }

    pub unsafe fn caller_frame() -> Option<FrameInfo> {
        None
    }

    pub unsafe fn agrees_with_public_api(_arg: *mut rb_trace_arg_t) -> bool {
        false
    }

    pub unsafe fn probe_iseq(_wrapper: VALUE) -> Option<IseqFields> {
        None
    }

    pub unsafe fn probe_caller() -> Option<(VALUE, i32, i32)> {
        None
    }

    pub unsafe fn each_ruby_frame(_each: impl FnMut(super::StackFrame)) {}

    pub unsafe fn current_frame() -> usize {
        0
    }

    pub unsafe fn executable_iseq(_value: VALUE) -> Option<(usize, usize, usize)> {
        None
    }

    pub unsafe fn iseq_trace_events(_iseq: VALUE) -> u32 {
        0
    }

    pub unsafe fn jit_calls(_wrapper: VALUE) -> Option<u64> {
        None
    }

    pub unsafe fn allow_jit_again(_body: usize) {}

    pub unsafe fn event_trace_events(_arg: *mut rb_trace_arg_t) -> Option<u32> {
        None
    }

    pub unsafe fn each_global_hook(
        _ractor: VALUE,
        _each: impl FnMut(super::EventHookEntry),
    ) -> bool {
        false
    }
}

pub use known::{
    agrees_with_public_api, allow_jit_again, caller_frame, current_frame, each_global_hook,
    each_ruby_frame, event_frame, event_trace_events, executable_iseq, iseq_trace_events,
    jit_calls, probe_caller, probe_iseq,
};

//! Where a coverage event happened, as a process-stable 64-bit id.
//!
//! A location is (source path, start of the instruction sequence, offset of
//! the program counter in it). The program counter offset is the same in
//! every process running the same code and differs between the two arms of
//! `c ? a : b` on one line; the instruction sequence's start (line and
//! column) tells apart methods and blocks in one file. Nothing here depends
//! on an object's address, so ids survive `GC.compact` and agree across
//! `-fork`, `-jobs` and `-merge` processes.
//!
//! Reading the program counter needs interpreter internals (the layouts of
//! `rb_trace_arg_t`, `rb_control_frame_t` and the iseq body), which have been
//! stable from Ruby 3.0 through 3.4. That path is compiled only for those
//! versions and checked against the public API on the first event: on any
//! disagreement, and on other Ruby versions, ids fall back to the public API
//! (path, line and event kind), which cannot tell apart branches that share
//! a line. Only Ruby 3.1 is tested.
//!
//! [`caller_site`] finds the Ruby frame that called a C method (the
//! comparison hooks' call sites); it also needs the size of a control
//! frame, known for Ruby 3.0 to 3.4 (build.rs), and checks what it reads.
//!
//! Invariants: no allocation, no lock; the returned path is the
//! interpreter's own string and is only read before the hook returns.

use rb_sys::{rb_trace_arg_t, ruby_value_type, VALUE};
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// One coverage event's location.
pub struct Site {
    /// The source path String (owned by the interpreter; read it with
    /// [`string_bytes`] before the hook returns).
    pub path: VALUE,
    /// Where the instruction sequence starts (line and column), or the
    /// line and event kind in public-API mode.
    pub start: u64,
    /// Program counter offset within the instruction sequence (0 in
    /// public-API mode).
    pub offset: u64,
    /// Addresses identifying the instruction sequence in this process, for
    /// caching per-iseq work: its body and its instruction buffer. Both are
    /// malloc'd (never moved by GC compaction). None in public-API mode.
    pub iseq: Option<(usize, usize)>,
}

const MODE_UNCHECKED: u8 = 0;
const MODE_INTERNAL: u8 = 1;
const MODE_PUBLIC: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(if cfg!(internal_layout) {
    MODE_UNCHECKED
} else {
    MODE_PUBLIC
});

/// Whether ids use the program counter (true) or only path and line.
pub fn precise() -> bool {
    MODE.load(Ordering::Relaxed) != MODE_PUBLIC
}

/// The location of the event described by `arg`.
///
/// # Safety
/// `arg` must be the trace argument Ruby passed to a RAW_ARG event hook,
/// and the call must happen inside that hook (GVL held).
#[inline(always)]
pub unsafe fn site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    match MODE.load(Ordering::Relaxed) {
        MODE_INTERNAL => internal::site(arg),
        MODE_PUBLIC => public_site(arg),
        _ => first_site(arg),
    }
}

#[cold]
unsafe fn first_site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    let mode = if internal::agrees_with_public_api(arg) {
        MODE_INTERNAL
    } else {
        let _ = writeln!(
            std::io::stderr(),
            "WARNING: ruzzy: this Ruby's interpreter layout is not the one ruzzy knows; \
             coverage falls back to (path, line) locations"
        );
        MODE_PUBLIC
    };
    MODE.store(mode, Ordering::Relaxed);
    site(arg)
}

/// The location of the Ruby code that called the C method now running
/// (for comparison hooks). None when it cannot be had precisely: Ruby
/// versions without the known layout, or a caller that is not Ruby code
/// (a C method calling `==` through `rb_funcall`).
///
/// # Safety
/// Must be called from a C method invoked by the interpreter (GVL held).
#[inline(always)]
pub unsafe fn caller_site() -> Option<Site> {
    if MODE.load(Ordering::Relaxed) == MODE_PUBLIC {
        return None;
    }
    // SAFETY (caller): inside a C method call.
    unsafe { internal::caller_site() }
}

/// Public API only: (path, line, event kind).
unsafe fn public_site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    // SAFETY (caller): `arg` is a live trace argument inside its hook.
    let path = unsafe { rb_sys::rb_tracearg_path(arg) };
    let line = unsafe { rb_sys::rb_tracearg_lineno(arg) } as u64;
    let event = unsafe { rb_sys::rb_tracearg_event_flag(arg) } as u64;
    Some(Site {
        path,
        start: (line << 32) ^ event,
        offset: 0,
        iseq: None,
    })
}

/// The per-iseq part of a location id: the path's hash mixed with where
/// the iseq starts. A location is `mix(base ^ pc offset)`.
#[inline(always)]
pub fn base(path_hash: u64, start: u64) -> u64 {
    path_hash ^ start.rotate_left(17)
}

/// A 64-bit finalizer (murmur3's fmix64): spreads ids over tables.
#[inline(always)]
pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The bytes of a String VALUE, or None for anything else.
///
/// # Safety
/// `value` must be a live object; the bytes are valid until Ruby code runs.
pub unsafe fn string_bytes(value: VALUE) -> Option<&'static [u8]> {
    // SAFETY (caller): live object; type checked before reading as String.
    unsafe {
        if rb_sys::SPECIAL_CONST_P(value)
            || !rb_sys::RB_TYPE_P(value, ruby_value_type::RUBY_T_STRING)
        {
            return None;
        }
        let len = rb_sys::RSTRING_LEN(value) as usize;
        let ptr = rb_sys::RSTRING_PTR(value) as *const u8;
        Some(std::slice::from_raw_parts(ptr, len))
    }
}

#[cfg(internal_layout)]
mod internal {
    //! Interpreter layouts, Ruby 3.0 to 3.4 (vm_core.h, iseq.h).
    use super::Site;
    use rb_sys::{rb_trace_arg_t, ruby_value_type, VALUE};

    #[repr(C)]
    struct TraceArg {
        event: u32,
        ec: *const u8,
        cfp: *const ControlFrame,
    }

    #[repr(C)]
    struct ControlFrame {
        pc: *const VALUE,
        sp: *const VALUE,
        iseq: *const Iseq,
    }

    #[repr(C)]
    struct Iseq {
        flags: VALUE,
        wrapper: VALUE,
        body: *const IseqBody,
    }

    #[repr(C)]
    struct IseqBody {
        kind: u32,
        iseq_size: u32,
        iseq_encoded: *const VALUE,
        param: [u8; 48],
        pathobj: VALUE,
        base_label: VALUE,
        label: VALUE,
        first_lineno: VALUE,
        node_id: i32,
        beg_line: i32,
        beg_column: i32,
        end_line: i32,
        end_column: i32,
    }

    struct Raw {
        path: VALUE,
        body: *const IseqBody,
        offset: u64,
    }

    /// Reads the frame; the path is resolved lazily (see `site`).
    #[inline(always)]
    unsafe fn raw(arg: *mut rb_trace_arg_t) -> Option<Raw> {
        // SAFETY (caller): `arg` is a live trace argument whose frame is a
        // Ruby-level frame (coverage events only fire from iseq code).
        unsafe {
            let arg = arg as *const TraceArg;
            let cfp = (*arg).cfp;
            if cfp.is_null() {
                return None;
            }
            let iseq = (*cfp).iseq;
            if iseq.is_null() {
                return None;
            }
            let body = (*iseq).body;
            if body.is_null() {
                return None;
            }
            let offset = (*cfp).pc.offset_from((*body).iseq_encoded) as u64;
            let pathobj = (*body).pathobj;
            let path = if rb_sys::RB_TYPE_P(pathobj, ruby_value_type::RUBY_T_ARRAY) {
                rb_sys::RARRAY_AREF(pathobj, 0)
            } else {
                pathobj
            };
            Some(Raw { path, body, offset })
        }
    }

    #[inline(always)]
    pub unsafe fn site(arg: *mut rb_trace_arg_t) -> Option<Site> {
        // SAFETY (caller): see `raw`.
        unsafe {
            let raw = raw(arg)?;
            let body = &*raw.body;
            let start = ((body.beg_line as u32 as u64) << 32) | body.beg_column as u32 as u64;
            Some(Site {
                path: raw.path,
                start,
                offset: raw.offset,
                iseq: Some((raw.body as usize, body.iseq_encoded as usize)),
            })
        }
    }

    extern "C" {
        fn ruzzy_current_ec() -> *const ExecutionContext;
    }

    #[repr(C)]
    struct ExecutionContext {
        vm_stack: *const VALUE,
        vm_stack_size: usize,
        cfp: *const ControlFrame,
    }

    const IMEMO_ISEQ: VALUE = 7;

    /// Size of rb_control_frame_t: pc, sp, iseq, self, ep, block_code,
    /// __bp__ and (3.1) jit_return.
    #[cfg(ruby_caller_frame_words = "8")]
    const FRAME_WORDS: usize = 8;
    #[cfg(ruby_caller_frame_words = "7")]
    const FRAME_WORDS: usize = 7;

    /// The frame below the running C method's frame, checked to be a Ruby
    /// frame whose pc lies inside its instruction sequence.
    #[cfg(any(ruby_caller_frame_words = "7", ruby_caller_frame_words = "8"))]
    #[inline(always)]
    pub unsafe fn caller_site() -> Option<Site> {
        // SAFETY (caller): inside a C method call, so the current frame is
        // its CFUNC frame and the one below it belongs to its caller; every
        // pointer is checked before it is followed.
        unsafe {
            let ec = ruzzy_current_ec();
            if ec.is_null() || (*ec).cfp.is_null() {
                return None;
            }
            let caller = ((*ec).cfp as *const VALUE).add(FRAME_WORDS) as *const ControlFrame;
            let iseq = (*caller).iseq;
            let pc = (*caller).pc;
            if iseq.is_null() || pc.is_null() || rb_sys::SPECIAL_CONST_P(iseq as VALUE) {
                return None;
            }
            // A C caller's frame holds a method entry (imemo_ment), not an
            // iseq (imemo_iseq, type 7 in bits 12..16 of the flags).
            if !rb_sys::RB_TYPE_P(iseq as VALUE, ruby_value_type::RUBY_T_IMEMO)
                || ((*iseq).flags >> 12) & 0xf != IMEMO_ISEQ
            {
                return None;
            }
            let body = (*iseq).body;
            if body.is_null() {
                return None;
            }
            let encoded = (*body).iseq_encoded;
            if pc < encoded || pc >= encoded.add((*body).iseq_size as usize) {
                return None;
            }
            let start = (((*body).beg_line as u32 as u64) << 32) | (*body).beg_column as u32 as u64;
            let pathobj = (*body).pathobj;
            let path = if rb_sys::RB_TYPE_P(pathobj, ruby_value_type::RUBY_T_ARRAY) {
                rb_sys::RARRAY_AREF(pathobj, 0)
            } else {
                pathobj
            };
            Some(Site {
                path,
                start,
                offset: pc.offset_from(encoded) as u64,
                iseq: Some((body as usize, encoded as usize)),
            })
        }
    }

    #[cfg(not(any(ruby_caller_frame_words = "7", ruby_caller_frame_words = "8")))]
    pub unsafe fn caller_site() -> Option<Site> {
        None
    }

    /// Cross-checks the layout against the public API on one event.
    pub unsafe fn agrees_with_public_api(arg: *mut rb_trace_arg_t) -> bool {
        // SAFETY (caller): see `raw`.
        unsafe {
            let Some(raw) = raw(arg) else { return false };
            let public_path = rb_sys::rb_tracearg_path(arg);
            let line = rb_sys::rb_tracearg_lineno(arg);
            let line = rb_sys::FIX2LONG(line) as i32;
            let body = &*raw.body;
            raw.path == public_path
                && rb_sys::FIXNUM_P(body.first_lineno)
                && body.beg_line <= line
                && line <= body.end_line
                && raw.offset < u64::from(body.iseq_size)
        }
    }
}

#[cfg(not(internal_layout))]
mod internal {
    use super::Site;
    use rb_sys::rb_trace_arg_t;

    pub unsafe fn site(_arg: *mut rb_trace_arg_t) -> Option<Site> {
        None
    }

    pub unsafe fn agrees_with_public_api(_arg: *mut rb_trace_arg_t) -> bool {
        false
    }

    pub unsafe fn caller_site() -> Option<Site> {
        None
    }
}

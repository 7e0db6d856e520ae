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
//! Reading the program counter needs interpreter internals, one layout per
//! Ruby version ([`interpreter_layout`]: 3.1, 3.3 and 3.4). The layout is
//! checked against the public API on the first event: on any disagreement,
//! on a Ruby whose layout is not known, and when `RUZZY_LOCATIONS=public`
//! forces it, ids fall back to the public API (path, line and event kind),
//! which cannot tell apart branches that share a line.
//!
//! [`caller_site`] finds the Ruby frame that called a C method (the
//! comparison hooks' call sites) through the same layout, and checks what
//! it reads; in public-API mode comparison sites have no location.
//!
//! Invariants: no allocation, no lock; the returned path is the
//! interpreter's own string and is only read before the hook returns.

use crate::rb::interpreter_layout::{self, FrameInfo};
use crate::rb::{self, value::Frame};
use rb_sys::{rb_trace_arg_t, VALUE};
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// One coverage event's location.
pub struct Site {
    /// The source path String (owned by the interpreter; read it through
    /// the hook's [`Frame`]).
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

static MODE: AtomicU8 = AtomicU8::new(if interpreter_layout::NAME.is_some() {
    MODE_UNCHECKED
} else {
    MODE_PUBLIC
});

/// Decides, once when the extension loads, whether the interpreter layout
/// may be used at all (by coverage and by comparison hooks alike):
/// `RUZZY_LOCATIONS=public` forces the public API. `setting` is that
/// variable's name (`Ruzzy::Settings::LOCATIONS`).
pub fn configure(setting: &str) {
    if std::env::var_os(setting).is_some_and(|value| value == "public") {
        MODE.store(MODE_PUBLIC, Ordering::Relaxed);
    }
}

/// The interpreter layout in use, or None in public-API mode.
pub fn layout() -> Option<&'static str> {
    if precise() {
        interpreter_layout::NAME
    } else {
        None
    }
}

/// Whether ids use the program counter (true) or only path and line.
pub fn precise() -> bool {
    MODE.load(Ordering::Relaxed) != MODE_PUBLIC
}

/// Calls `f` with the location of the event described by `arg`, if it has
/// one. `f` is inlined into each way of finding the location, so the hot
/// one (the interpreter layout) keeps the site in registers.
///
/// # Safety
/// `arg` must be the trace argument Ruby passed to a RAW_ARG event hook,
/// and the call must happen inside that hook (GVL held).
#[inline(always)]
pub unsafe fn with_site(arg: *mut rb_trace_arg_t, f: impl Fn(Site)) {
    let site = match MODE.load(Ordering::Relaxed) {
        // SAFETY: by the caller's contract, `arg` is this hook's argument.
        MODE_INTERNAL => unsafe { internal_site(arg) }.map(&f),
        // SAFETY: as above.
        MODE_PUBLIC => unsafe { public_site(arg) }.map(&f),
        // SAFETY: as above.
        _ => unsafe { first_site(arg) }.map(&f),
    };
    let _ = site;
}

/// The location of the event described by `arg`.
///
/// # Safety
/// As for [`with_site`].
unsafe fn site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    // SAFETY: by the caller's contract, as documented.
    unsafe {
        match MODE.load(Ordering::Relaxed) {
            MODE_INTERNAL => internal_site(arg),
            MODE_PUBLIC => public_site(arg),
            _ => first_site(arg),
        }
    }
}

/// # Safety
/// As for [`with_site`].
#[cold]
unsafe fn first_site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    // SAFETY: by the caller's contract, a live trace argument inside its hook.
    let mode = if unsafe { interpreter_layout::agrees_with_public_api(arg) } {
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
    // SAFETY: by the caller's contract, as above.
    unsafe { site(arg) }
}

/// The location of the Ruby code that called the C method now running
/// (for comparison hooks). None when it cannot be had precisely: Ruby
/// versions without the known layout, or a caller that is not Ruby code
/// (a C method calling `==` through `rb_funcall`).
#[inline(always)]
pub fn caller_site(_frame: &Frame) -> Option<Site> {
    if MODE.load(Ordering::Relaxed) == MODE_PUBLIC {
        return None;
    }
    // SAFETY: a frame exists only inside a native call made by the
    // interpreter, with the GVL held.
    unsafe { interpreter_layout::caller_frame() }.map(Site::from)
}

/// Program-counter location of a coverage event.
#[inline(always)]
unsafe fn internal_site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    // SAFETY: by the caller's contract, `arg` is a live trace argument inside its hook.
    unsafe { interpreter_layout::event_frame(arg) }.map(Site::from)
}

impl From<FrameInfo> for Site {
    #[inline(always)]
    fn from(frame: FrameInfo) -> Site {
        Site {
            path: frame.path,
            start: (u64::from(frame.beg_line as u32) << 32) | u64::from(frame.beg_column as u32),
            offset: frame.offset,
            iseq: Some((frame.body, frame.encoded)),
        }
    }
}

/// Public API only: (path, line, event kind).
unsafe fn public_site(arg: *mut rb_trace_arg_t) -> Option<Site> {
    // SAFETY: by the caller's contract, `arg` is a live trace argument inside its hook.
    let path = unsafe { rb::trace_path(arg) };
    // SAFETY: by the caller's contract, as above.
    let line = u64::from(unsafe { rb::trace_line(arg) });
    // SAFETY: by the caller's contract, as above.
    let event = u64::from(unsafe { rb::trace_event(arg) });
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

//! Which hooked regular-expression match runs now. The Regexp and String
//! pattern hooks ([`super::compare_hooks::regexp`]) run the original method
//! inside [`matching`]; the ReDoS detector (`detectors::held_findings`)
//! reads the pattern when a match raises `Regexp::TimeoutError`, and on
//! Rubies without `Regexp.timeout` its watchdog asks for the running match
//! and its number ([`current`]) a few times a second.
//!
//! Invariants: written and read only with the GVL held (the watchdog is a
//! Ruby thread); the pattern is read only while the match that set it runs
//! (every raise and every input's end clear it: [`take`], [`clear`]); no
//! clock is read per match, and matches are numbered only once
//! [`count_matches`] asked for it.

use rb_sys::VALUE;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The pattern of the hooked match running now (0: none).
static MATCHING: AtomicUsize = AtomicUsize::new(0);
/// How many hooked matches have started (counted on Rubies without
/// Regexp.timeout only, where the watchdog needs it).
static MATCHES_STARTED: AtomicU64 = AtomicU64::new(0);
/// Whether matches are counted.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Runs `super_call` (a hooked match of `pattern`) as the running match.
#[inline(always)]
pub fn matching<R>(pattern: VALUE, super_call: impl FnOnce() -> R) -> R {
    let outer = MATCHING.swap(pattern as usize, Ordering::Relaxed);
    if COUNTING.load(Ordering::Relaxed) {
        // Only ever written with the GVL held: no atomic read-modify-write.
        let started = MATCHES_STARTED.load(Ordering::Relaxed);
        MATCHES_STARTED.store(started.wrapping_add(1), Ordering::Relaxed);
    }
    let result = super_call();
    MATCHING.store(outer, Ordering::Relaxed);
    result
}

/// From now on hooked matches are numbered (for [`current`]).
pub fn count_matches() {
    COUNTING.store(true, Ordering::Relaxed);
}

/// The pattern of the hooked match running now and the number of hooked
/// matches started so far, or None when none runs.
pub fn current() -> Option<(VALUE, u64)> {
    let pattern = MATCHING.load(Ordering::Relaxed);
    (pattern != 0).then(|| (pattern as VALUE, MATCHES_STARTED.load(Ordering::Relaxed)))
}

/// A raise ends the running match: its pattern, or None.
pub fn take() -> Option<VALUE> {
    let pattern = MATCHING.swap(0, Ordering::Relaxed);
    (pattern != 0).then_some(pattern as VALUE)
}

/// The input ended: no match runs.
pub fn clear() {
    MATCHING.store(0, Ordering::Relaxed);
}

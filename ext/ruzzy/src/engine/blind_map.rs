//! The coverage map an engine that cannot fuzz without one (LibAFL's
//! runtime) gets when Ruby coverage is off (`--no-coverage`, a harness
//! without `Ruzzy.trace`): one counter that every input hits, so that the
//! first input enters the corpus and the engine mutates from there, blind.
//!
//! Invariants: registered at most once, before the driver starts; the map
//! lives for the rest of the process; per input, one relaxed load when it is
//! not in use, otherwise one relaxed store.

use crate::coverage::sancov_8bit::EdgeMap;
use crate::process::libfuzzer::Engine;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// The counter every input hits (null: no blind map).
static COUNTER: AtomicPtr<AtomicU8> = AtomicPtr::new(std::ptr::null_mut());

/// Registers the blind map with `engine`.
pub fn register(engine: &Engine) {
    let map: &'static EdgeMap = Box::leak(Box::new(EdgeMap::new(64)));
    map.register_with(engine);
    COUNTER.store(
        std::ptr::from_ref(&map.counters[0]).cast_mut(),
        Ordering::Relaxed,
    );
}

/// Before each input ([`crate::engine::lifecycle`]): hits the counter when
/// the blind map is in use.
#[inline]
pub fn before_input() {
    let counter = COUNTER.load(Ordering::Relaxed);
    if !counter.is_null() {
        // SAFETY: the counter belongs to a map leaked by `register`, which
        // is never freed.
        unsafe { (*counter).store(1, Ordering::Relaxed) };
    }
}

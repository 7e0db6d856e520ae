//! The edge map: 8-bit counters and their PC table, registered with
//! libFuzzer (`__sanitizer_cov_8bit_counters_init`, `__sanitizer_cov_pcs_init`).
//!
//! An edge is a pair (previous location, current location), hashed AFL-style
//! into `counters[(current ^ previous >> 1) & mask]` ([`EdgeMap::hit`]); a
//! location can also count on its own, leaving the previous location as it
//! is ([`EdgeMap::touch`]: methods and blocks, comparison sites). Counters saturate at
//! 255 instead of wrapping back to zero. Every counter has its own PC in the
//! table (`PC_BASE + PC_STRIDE * index`), and the first location that reached a counter
//! is remembered, so a PC can be described as `path:line`.
//!
//! The map is allocated once with its capacity; the part in use (a power
//! of two, the mask of the hash) can shrink once, before it is registered
//! with libFuzzer ([`EdgeMap::fit`]), so that libFuzzer, which clears and
//! scans every registered counter after each input, scans only what the
//! instrumented code needs.
//!
//! Invariants: allocated once (power-of-two capacity) before the first event,
//! never freed; the hot path does loads, stores and arithmetic
//! only. libFuzzer clears the counters between inputs; ruzzy clears the
//! previous location at the start of each input. The previous location is
//! per thread: a thread the target starts makes edges of its own code, never
//! edges between its locations and the main thread's, whose order would
//! depend on thread switches.

use crate::coverage::path_registry::PathId;
use crate::process::libfuzzer::Engine;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

thread_local! {
    /// The previous location of this thread, shifted right by one.
    static PREVIOUS: Cell<u64> = const { Cell::new(0) };
}

/// First fake PC; PCs are `PC_BASE + PC_STRIDE * counter index`.
pub const PC_BASE: usize = 0x1000;

/// Distance between fake PCs. libFuzzer describes `pc + 1` (x86) or
/// `pc + 4`/`pc + 8` (other targets) as "the next instruction"; a stride of
/// 16 maps all of them back to the same counter.
pub const PC_STRIDE: usize = 16;

/// The counter a (possibly "next instruction") PC stands for.
pub fn counter_of_pc(pc: usize) -> Option<usize> {
    pc.checked_sub(PC_BASE).map(|offset| offset / PC_STRIDE)
}

/// Number of counters when it cannot be fitted to the code.
pub const DEFAULT_SIZE: usize = 1 << 14;

/// Fewest and most counters a fitted map has.
pub const MIN_FITTED_SIZE: usize = 1 << 11;
pub const MAX_FITTED_SIZE: usize = 1 << 16;

/// Counters per unit of instrumented code (an executable line or a branch
/// arm) when fitting: edges outnumber locations, and a sparse map keeps
/// hash collisions rare.
pub const COUNTERS_PER_UNIT: usize = 2;

/// The number of counters fitted to `units` of instrumented code.
pub fn fitted_size(units: usize) -> usize {
    units
        .saturating_mul(COUNTERS_PER_UNIT)
        .clamp(MIN_FITTED_SIZE, MAX_FITTED_SIZE)
        .next_power_of_two()
}

/// One PC table entry as libFuzzer reads it: (PC, flags).
#[repr(C)]
pub struct PcEntry {
    pub pc: usize,
    pub flags: usize,
}

/// The first source location that reached a counter.
pub struct FirstHit {
    path: AtomicU32,
    line: AtomicU32,
}

pub struct EdgeMap {
    pub counters: Box<[AtomicU8]>,
    pub pcs: Box<[PcEntry]>,
    first_hits: Box<[FirstHit]>,
    /// One bit per counter: reached at least once (its first hit is
    /// remembered). 1/64 of the first-hit table, so it stays in cache.
    seen: Box<[AtomicU64]>,
    /// Counters in use minus one (a power of two minus one).
    mask: AtomicU64,
}

impl EdgeMap {
    /// A map with `size` counters (rounded up to a power of two, at least 64).
    pub fn new(size: usize) -> EdgeMap {
        let size = size.max(64).next_power_of_two();
        let mask = AtomicU64::new(size as u64 - 1);
        EdgeMap {
            counters: (0..size).map(|_| AtomicU8::new(0)).collect(),
            // flags = 1 marks every PC as a function entry, so libFuzzer's
            // -print_coverage lists each counter on its own line.
            pcs: (0..size)
                .map(|i| PcEntry {
                    pc: PC_BASE + PC_STRIDE * i,
                    flags: 1,
                })
                .collect(),
            first_hits: (0..size)
                .map(|_| FirstHit {
                    path: AtomicU32::new(u32::MAX),
                    line: AtomicU32::new(0),
                })
                .collect(),
            seen: (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            mask,
        }
    }

    /// Counters in use.
    pub fn len(&self) -> usize {
        self.mask.load(Ordering::Relaxed) as usize + 1
    }

    /// Registers the counters in use and their PCs with `engine`.
    pub fn register_with(&self, engine: &Engine) {
        let counters = self.counters.as_ptr() as *mut u8;
        let pcs = self.pcs.as_ptr() as *const usize;
        // SAFETY: both tables live for the rest of the process (the map is
        // never freed) and have at least self.len() entries each (libFuzzer
        // requires the same count); they are registered once, before the
        // driver starts, and self.len() never changes afterwards.
        unsafe {
            (engine.counters_init)(counters, counters.add(self.len()));
            (engine.pcs_init)(pcs, pcs.add(self.len() * 2));
        }
    }

    /// Uses only the first `size` counters (a power of two, at most the
    /// capacity) and forgets every first hit, whose indices change. Call
    /// before the map is registered with libFuzzer.
    pub fn fit(&self, size: usize) {
        let size = size.next_power_of_two().clamp(64, self.counters.len());
        self.mask.store(size as u64 - 1, Ordering::Relaxed);
        for word in self.seen.iter() {
            word.store(0, Ordering::Relaxed);
        }
        for hit in self.first_hits.iter() {
            hit.line.store(0, Ordering::Relaxed);
        }
        for counter in self.counters.iter() {
            counter.store(0, Ordering::Relaxed);
        }
    }

    /// Forgets this thread's previous location (start of an input).
    #[inline(always)]
    pub fn reset_previous(&self) {
        PREVIOUS.set(0);
    }

    /// Records the edge into `location`; returns the counter index and
    /// whether this counter was never reached before in this process.
    #[inline(always)]
    pub fn hit(&self, location: u64) -> (usize, bool) {
        let previous = PREVIOUS.replace(location >> 1);
        let index = ((location ^ previous) & self.mask.load(Ordering::Relaxed)) as usize;
        (index, self.bump(index))
    }

    /// Counts `location` as reached on its own, without making it the
    /// previous location of the next edge (methods and blocks, comparison
    /// sites); returns the counter index and whether it is new, as
    /// [`EdgeMap::hit`] does.
    #[inline(always)]
    pub fn touch(&self, location: u64) -> (usize, bool) {
        let index = (location & self.mask.load(Ordering::Relaxed)) as usize;
        (index, self.bump(index))
    }

    /// Adds one to counter `index` (saturating); whether it was never
    /// reached before.
    #[inline(always)]
    fn bump(&self, index: usize) -> bool {
        let counter = &self.counters[index];
        let value = counter.load(Ordering::Relaxed);
        counter.store(value.saturating_add(1), Ordering::Relaxed);
        self.seen[index / 64].load(Ordering::Relaxed) & 1 << (index % 64) == 0
    }

    /// Remembers where a counter was first reached (rare path).
    #[cold]
    pub fn remember(&self, index: usize, path: PathId, line: u32) {
        let hit = &self.first_hits[index];
        hit.path.store(path.index(), Ordering::Relaxed);
        hit.line.store(line.max(1), Ordering::Relaxed);
        self.seen[index / 64].fetch_or(1 << (index % 64), Ordering::Relaxed);
    }

    /// Where counter `index` was first reached, if known.
    pub fn first_hit(&self, index: usize) -> Option<(PathId, u32)> {
        if index >= self.len() {
            return None;
        }
        let hit = self.first_hits.get(index)?;
        let line = hit.line.load(Ordering::Relaxed);
        (line != 0).then(|| (PathId::from_index(hit.path.load(Ordering::Relaxed)), line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_saturate_and_edges_depend_on_order() {
        let map = EdgeMap::new(1000);
        assert_eq!(map.len(), 1024);
        map.reset_previous();
        let (a, first) = map.hit(0x1234);
        assert!(first);
        for _ in 0..300 {
            map.reset_previous();
            map.hit(0x1234);
        }
        assert_eq!(map.counters[a].load(Ordering::Relaxed), 255);
        map.reset_previous();
        map.hit(1);
        let (ab, _) = map.hit(2);
        map.reset_previous();
        map.hit(2);
        let (ba, _) = map.hit(1);
        assert_ne!(ab, ba);
    }

    #[test]
    fn fitting_shrinks_the_hash_and_forgets_first_hits() {
        let map = EdgeMap::new(1 << 12);
        map.reset_previous();
        let (index, _) = map.hit(0xfff);
        map.remember(index, PathId::from_index(0), 3);
        map.reset_previous();
        assert!(!map.hit(0xfff).1, "a remembered counter is not new");
        map.fit(100);
        assert_eq!(map.len(), 128);
        assert_eq!(map.first_hit(index), None);
        for location in 0..10_000 {
            assert!(map.hit(location).0 < 128);
        }
        map.reset_previous();
        assert!(
            map.hit(0xfff).1,
            "first hits are forgotten: indices changed"
        );
    }

    #[test]
    fn fitted_sizes_grow_with_the_code_within_bounds() {
        assert_eq!(fitted_size(0), MIN_FITTED_SIZE);
        assert_eq!(fitted_size(1692), 4096);
        assert_eq!(fitted_size(2402), 8192);
        assert_eq!(fitted_size(usize::MAX), MAX_FITTED_SIZE);
    }

    #[test]
    fn each_thread_has_its_own_previous_location() {
        let map = EdgeMap::new(1024);
        map.reset_previous();
        let (alone, _) = map.hit(7);
        map.reset_previous();
        map.hit(3);
        let other = std::thread::scope(|scope| scope.spawn(|| map.hit(7).0).join().unwrap());
        assert_eq!(
            other, alone,
            "another thread's edge must not start at this thread's location"
        );
    }
}

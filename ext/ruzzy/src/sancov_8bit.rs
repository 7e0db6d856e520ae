//! The edge map: 8-bit counters and their PC table, registered with
//! libFuzzer (`__sanitizer_cov_8bit_counters_init`, `__sanitizer_cov_pcs_init`).
//!
//! An edge is a pair (previous location, current location), hashed AFL-style
//! into `counters[(current ^ previous >> 1) & mask]`. Counters saturate at
//! 255 instead of wrapping back to zero. Every counter has its own PC in the
//! table (`PC_BASE + PC_STRIDE * index`), and the first location that reached a counter
//! is remembered, so a PC can be described as `path:line`.
//!
//! Invariants: allocated once (power-of-two size) before the first event,
//! never freed or resized; the hot path does loads, stores and arithmetic
//! only. libFuzzer clears the counters between inputs; ruzzy clears the
//! previous location at the start of each input. The previous location is
//! per thread: a thread the target starts makes edges of its own code, never
//! edges between its locations and the main thread's, whose order would
//! depend on thread switches.

use crate::path_registry::PathId;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

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

/// Default number of counters.
pub const DEFAULT_SIZE: usize = 1 << 14;

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
    mask: u64,
}

impl EdgeMap {
    /// A map with `size` counters (rounded up to a power of two, at least 64).
    pub fn new(size: usize) -> EdgeMap {
        let size = size.max(64).next_power_of_two();
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
            mask: size as u64 - 1,
        }
    }

    pub fn len(&self) -> usize {
        self.counters.len()
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
        let index = ((location ^ previous) & self.mask) as usize;
        let counter = &self.counters[index];
        let value = counter.load(Ordering::Relaxed);
        counter.store(value.saturating_add(1), Ordering::Relaxed);
        let first = self.first_hits[index].line.load(Ordering::Relaxed) == 0;
        (index, first)
    }

    /// Counts `location` as reached on its own, without making it the
    /// previous location of the next edge (comparison sites).
    #[inline(always)]
    pub fn touch(&self, location: u64) {
        let counter = &self.counters[(location & self.mask) as usize];
        let value = counter.load(Ordering::Relaxed);
        counter.store(value.saturating_add(1), Ordering::Relaxed);
    }

    /// Remembers where a counter was first reached (rare path).
    #[cold]
    pub fn remember(&self, index: usize, path: PathId, line: u32) {
        let hit = &self.first_hits[index];
        hit.path.store(path.index(), Ordering::Relaxed);
        hit.line.store(line.max(1), Ordering::Relaxed);
    }

    /// Where counter `index` was first reached, if known.
    pub fn first_hit(&self, index: usize) -> Option<(PathId, u32)> {
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

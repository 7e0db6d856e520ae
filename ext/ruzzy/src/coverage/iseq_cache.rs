//! Per-instruction-sequence memo for the locator (coverage events and
//! comparison callers).
//!
//! Hashing a source path and looking it up in the path registry costs more
//! than the rest of the hook; both depend only on the instruction sequence,
//! not on the program counter. This direct-mapped table remembers, per iseq,
//! the location base (path hash mixed with the iseq's start) and the path's
//! registry entry.
//!
//! Entries are keyed by the addresses of the iseq's body and instruction
//! buffer. Both are malloc'd, so GC compaction never moves them; an entry
//! can only go stale if an iseq is freed and a new one gets both the same
//! body and the same instruction buffer addresses, in which case the new
//! iseq's events would be attributed to the old one's location base.
//!
//! Invariants: allocated once; no allocation or lock afterwards; one writer
//! at a time (the GVL holder); an entry is published by storing its key
//! last and invalidated by clearing it first.

use crate::coverage::path_registry::PathId;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const SLOTS: usize = 1 << 12;
const INCLUDED: u64 = 1;
const SWITCHED_OFF: u64 = 2;

/// What the hook needs per iseq.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IseqInfo {
    pub base: u64,
    pub path: PathId,
    pub included: bool,
    /// Quiet coverage switched its coverage events off
    /// ([`crate::coverage::quiet`]): an event from it means something
    /// switched them on again.
    pub switched_off: bool,
}

struct Entry {
    body: AtomicUsize,
    encoded: AtomicUsize,
    base: AtomicU64,
    path: AtomicU64,
}

pub struct IseqCache {
    slots: Box<[Entry]>,
}

impl IseqCache {
    pub fn new() -> IseqCache {
        IseqCache {
            slots: (0..SLOTS)
                .map(|_| Entry {
                    body: AtomicUsize::new(0),
                    encoded: AtomicUsize::new(0),
                    base: AtomicU64::new(0),
                    path: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    fn slot(&self, body: usize) -> &Entry {
        &self.slots[((body >> 4) ^ (body >> 16)) & (SLOTS - 1)]
    }

    #[inline(always)]
    pub fn get(&self, (body, encoded): (usize, usize)) -> Option<IseqInfo> {
        let entry = self.slot(body);
        if entry.body.load(Ordering::Acquire) != body
            || entry.encoded.load(Ordering::Relaxed) != encoded
        {
            return None;
        }
        let path = entry.path.load(Ordering::Relaxed);
        Some(IseqInfo {
            base: entry.base.load(Ordering::Relaxed),
            path: PathId::from_index((path >> 2) as u32),
            included: path & INCLUDED != 0,
            switched_off: path & SWITCHED_OFF != 0,
        })
    }

    #[cold]
    pub fn put(&self, (body, encoded): (usize, usize), info: IseqInfo) {
        let entry = self.slot(body);
        entry.body.store(0, Ordering::Release);
        entry.encoded.store(encoded, Ordering::Relaxed);
        entry.base.store(info.base, Ordering::Relaxed);
        entry.path.store(
            u64::from(info.path.index()) << 2
                | u64::from(info.included)
                | if info.switched_off { SWITCHED_OFF } else { 0 },
            Ordering::Relaxed,
        );
        entry.body.store(body, Ordering::Release);
    }

    /// Marks the iseq with this key as switched off or on, if it has an
    /// entry (one that does not is marked when it is resolved again).
    #[cold]
    pub fn mark(&self, (body, encoded): (usize, usize), switched_off: bool) {
        let entry = self.slot(body);
        if entry.body.load(Ordering::Acquire) != body
            || entry.encoded.load(Ordering::Relaxed) != encoded
        {
            return;
        }
        if switched_off {
            entry.path.fetch_or(SWITCHED_OFF, Ordering::Relaxed);
        } else {
            entry.path.fetch_and(!SWITCHED_OFF, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_requires_both_addresses() {
        let cache = IseqCache::new();
        let info = IseqInfo {
            base: 42,
            path: PathId::from_index(7),
            included: true,
            switched_off: false,
        };
        assert_eq!(cache.get((0x1000, 0x2000)), None);
        cache.put((0x1000, 0x2000), info);
        assert_eq!(cache.get((0x1000, 0x2000)), Some(info));
        assert_eq!(cache.get((0x1000, 0x3000)), None);
        cache.put(
            (0x1000, 0x3000),
            IseqInfo {
                included: false,
                ..info
            },
        );
        assert_eq!(cache.get((0x1000, 0x2000)), None);
        assert!(!cache.get((0x1000, 0x3000)).unwrap().included);
        cache.mark((0x1000, 0x3000), true);
        let marked = cache.get((0x1000, 0x3000)).unwrap();
        assert!(marked.switched_off && !marked.included);
        assert_eq!(marked.path, info.path);
        cache.mark((0x1000, 0x2000), true);
        cache.mark((0x1000, 0x3000), false);
        assert!(!cache.get((0x1000, 0x3000)).unwrap().switched_off);
    }
}

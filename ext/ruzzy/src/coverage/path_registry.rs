//! Source paths seen by the coverage hook: whether each is instrumented
//! (include/exclude rules) and its name, for mapping counters back to files.
//!
//! The table and the byte arena holding path names are allocated once, when
//! coverage starts; the hook only reads and (the first time a path is seen)
//! writes into them. If either fills up, decisions are still correct (made
//! afresh each time) but the path is not remembered.
//!
//! Rules: a pattern starting with `/` matches paths that start with it; any
//! other pattern matches paths containing it. A path is instrumented unless
//! an exclude pattern matches, and, when include patterns exist, only if one
//! of them matches.
//!
//! Invariants: no allocation and no lock after `new`; writers hold the GVL
//! (coverage events fire only in threads holding it), so there is one
//! writer at a time; slots are published by storing the hash last.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const SLOTS: usize = 1 << 14;
const ARENA_BYTES: usize = 4 << 20;
const INCLUDED: u64 = 1;

/// A path's slot in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathId(u32);

impl PathId {
    pub const UNKNOWN: PathId = PathId(u32::MAX);

    pub fn index(self) -> u32 {
        self.0
    }

    pub fn from_index(index: u32) -> PathId {
        PathId(index)
    }
}

struct Slot {
    hash: AtomicU64,
    /// bit 0: included; bits 1..32: name length; bits 32..64: arena offset.
    info: AtomicU64,
}

pub struct PathRegistry {
    slots: Box<[Slot]>,
    arena: Box<[UnsafeCell<u8>]>,
    arena_used: AtomicUsize,
    includes: Vec<Vec<u8>>,
    excludes: Vec<Vec<u8>>,
}

// SAFETY: the arena is written only by the single GVL holder, at offsets no
// reader can see until the slot's hash is published (Release/Acquire).
unsafe impl Sync for PathRegistry {}

impl PathRegistry {
    pub fn new(includes: Vec<Vec<u8>>, excludes: Vec<Vec<u8>>) -> PathRegistry {
        PathRegistry {
            slots: (0..SLOTS)
                .map(|_| Slot {
                    hash: AtomicU64::new(0),
                    info: AtomicU64::new(0),
                })
                .collect(),
            arena: (0..ARENA_BYTES).map(|_| UnsafeCell::new(0)).collect(),
            arena_used: AtomicUsize::new(0),
            includes,
            excludes,
        }
    }

    /// Looks `path` (whose hash is `hash`) up, registering it on first
    /// sight. Returns its id and whether it is instrumented.
    #[inline(always)]
    pub fn lookup(&self, hash: u64, path: &[u8]) -> (PathId, bool) {
        let hash = hash | 1 << 63; // never 0, the empty marker
        let mask = SLOTS - 1;
        let mut index = hash as usize & mask;
        for _ in 0..SLOTS {
            let slot = &self.slots[index];
            match slot.hash.load(Ordering::Acquire) {
                h if h == hash => {
                    let info = slot.info.load(Ordering::Relaxed);
                    return (PathId(index as u32), info & INCLUDED != 0);
                }
                0 => return self.insert(index, hash, path),
                _ => index = (index + 1) & mask,
            }
        }
        (PathId::UNKNOWN, self.decide(path))
    }

    #[cold]
    fn insert(&self, index: usize, hash: u64, path: &[u8]) -> (PathId, bool) {
        let included = self.decide(path);
        let start = self.arena_used.load(Ordering::Relaxed);
        let (offset, len) = if start + path.len() <= self.arena.len() && path.len() < 1 << 31 {
            for (cell, byte) in self.arena[start..start + path.len()].iter().zip(path) {
                // SAFETY: single writer (GVL); these bytes are not yet visible
                // to any reader (the slot is published below).
                unsafe { *cell.get() = *byte };
            }
            self.arena_used.store(start + path.len(), Ordering::Relaxed);
            (start as u64, path.len() as u64)
        } else {
            (0, 0)
        };
        let slot = &self.slots[index];
        slot.info.store(
            offset << 32 | len << 1 | u64::from(included),
            Ordering::Relaxed,
        );
        slot.hash.store(hash, Ordering::Release);
        (PathId(index as u32), included)
    }

    /// How many paths it can remember (every `PathId` index is below it).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Whether `path` is instrumented under the include/exclude rules.
    pub fn decide(&self, path: &[u8]) -> bool {
        decide(&self.includes, &self.excludes, path)
    }

    /// The name of a registered path (empty if it was not remembered).
    pub fn name(&self, id: PathId) -> &[u8] {
        let Some(slot) = self.slots.get(id.0 as usize) else {
            return &[];
        };
        if slot.hash.load(Ordering::Acquire) == 0 {
            return &[];
        }
        let info = slot.info.load(Ordering::Relaxed);
        let (offset, len) = ((info >> 32) as usize, ((info >> 1) & 0x7fff_ffff) as usize);
        let bytes = &self.arena[offset..offset + len];
        // SAFETY: published bytes are never written again; UnsafeCell<u8>
        // has the layout of u8.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const u8, len) }
    }
}

/// Whether the rules (see the module header) let `path` be instrumented.
pub fn decide<P: AsRef<[u8]>>(includes: &[P], excludes: &[P], path: &[u8]) -> bool {
    if excludes.iter().any(|p| matches(p.as_ref(), path)) {
        return false;
    }
    includes.is_empty() || includes.iter().any(|p| matches(p.as_ref(), path))
}

/// `Ruzzy::Native._rules_include?(includes, excludes, path)`: the same decision for
/// Ruby code that applies the rules without coverage running (`ruzzy cov`).
pub fn rules_include(includes: Vec<String>, excludes: Vec<String>, path: String) -> bool {
    decide(&includes, &excludes, path.as_bytes())
}

fn matches(pattern: &[u8], path: &[u8]) -> bool {
    if pattern.first() == Some(&b'/') {
        path.starts_with(pattern)
    } else {
        !pattern.is_empty() && path.windows(pattern.len()).any(|w| w == pattern)
    }
}

/// A fast, process-independent 64-bit hash of a byte string.
#[inline(always)]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = bytes.len() as u64 ^ K;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        h = (h ^ word).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        let r = PathRegistry::new(vec![b"lib/mygem".to_vec()], vec![b"/opt/ruzzy".to_vec()]);
        assert!(r.decide(b"/src/lib/mygem/parser.rb"));
        assert!(!r.decide(b"/src/lib/other.rb"));
        assert!(!r.decide(b"/opt/ruzzy/lib/mygem/x.rb"));
        let all = PathRegistry::new(vec![], vec![]);
        assert!(all.decide(b"/anything.rb"));
    }

    #[test]
    fn registers_once_and_remembers_names() {
        let r = PathRegistry::new(vec![], vec![b"skip".to_vec()]);
        let (a, inc_a) = r.lookup(hash_bytes(b"/a.rb"), b"/a.rb");
        let (b, inc_b) = r.lookup(hash_bytes(b"/skip/b.rb"), b"/skip/b.rb");
        assert!(inc_a && !inc_b);
        assert_eq!(r.lookup(hash_bytes(b"/a.rb"), b"/a.rb"), (a, true));
        assert_eq!(r.name(a), b"/a.rb");
        assert_eq!(r.name(b), b"/skip/b.rb");
        assert_eq!(r.name(PathId::UNKNOWN), b"");
    }

    #[test]
    fn hash_depends_on_every_byte() {
        assert_ne!(hash_bytes(b"/x/a.rb"), hash_bytes(b"/x/b.rb"));
        assert_ne!(hash_bytes(b"abcdefgh1"), hash_bytes(b"abcdefgh2"));
        assert_eq!(hash_bytes(b"same"), hash_bytes(b"same"));
    }
}

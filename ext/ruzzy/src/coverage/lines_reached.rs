//! The lines of instrumented code the fuzzed inputs ran, per file: what a
//! campaign's status line counts as lines reached (`Ruzzy::Native._reached`).
//!
//! The edge counters cannot tell: every line of a method or block counts
//! for that method's or block's one counter (see [`crate::coverage::hook`]),
//! so a block of six lines without a branch, a harness calling a C
//! extension, is one counter, first reached at its first line. Lines are
//! kept apart here, as a set of (file, line) pairs: each line event (once
//! per line and process) adds its line, and so does each counter's first
//! hit (the line of a branch arm, whose line event may have fired while the
//! harness loaded).
//!
//! Invariants: allocated once, when coverage starts; the hook only loads,
//! compares and swaps, and adds (no allocation, no lock; writers hold the
//! GVL, as every coverage event does). Nothing is counted before fuzzing
//! starts ([`LinesReached::start`]): what runs while the harness loads is
//! not the inputs' doing. When the set is full, further lines are not
//! counted (the count is then a lower bound).

use crate::coverage::location;
use crate::coverage::path_registry::PathId;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Slots of the set (8 bytes each): far more lines than fuzzing runs.
const CAPACITY: usize = 1 << 17;
/// Slots looked at for a key before the set counts as full.
const PROBES: usize = 64;

pub struct LinesReached {
    /// (file index + 1) << 32 | line; 0 is an empty slot.
    keys: Box<[AtomicU64]>,
    /// Distinct lines per file, by `PathId` index.
    per_file: Box<[AtomicU32]>,
    counting: AtomicBool,
}

impl LinesReached {
    /// A set for files with `PathId` indices below `files`.
    pub fn new(files: usize) -> LinesReached {
        LinesReached {
            keys: (0..CAPACITY).map(|_| AtomicU64::new(0)).collect(),
            per_file: (0..files).map(|_| AtomicU32::new(0)).collect(),
            counting: AtomicBool::new(false),
        }
    }

    /// Fuzzing starts: lines count from now on.
    pub fn start(&self) {
        self.counting.store(true, Ordering::Relaxed);
    }

    /// Whether lines count (fuzzing has started).
    #[inline(always)]
    pub fn counting(&self) -> bool {
        self.counting.load(Ordering::Relaxed)
    }

    /// Counts `line` of `path` as reached, once; whether it is new.
    pub fn add(&self, path: PathId, line: u32) -> bool {
        let file = path.index() as usize;
        if !self.counting() || file >= self.per_file.len() {
            return false;
        }
        let key = (file as u64 + 1) << 32 | u64::from(line);
        let mask = self.keys.len() - 1;
        let mut slot = location::mix(key) as usize & mask;
        for _ in 0..PROBES {
            match self.keys[slot].compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.per_file[file].fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                Err(found) if found == key => return false,
                Err(_) => slot = (slot + 1) & mask,
            }
        }
        false
    }

    /// The files with lines reached, each with their number.
    pub fn files(&self) -> impl Iterator<Item = (PathId, u32)> + '_ {
        self.per_file
            .iter()
            .enumerate()
            .filter_map(|(index, count)| {
                let lines = count.load(Ordering::Relaxed);
                (lines > 0).then(|| (PathId::from_index(index as u32), lines))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_of_a_file_counts_once_from_the_start_of_fuzzing() {
        let lines = LinesReached::new(4);
        let (a, b) = (PathId::from_index(0), PathId::from_index(3));
        assert!(!lines.add(a, 1), "nothing counts while the harness loads");
        lines.start();
        assert!(lines.add(a, 1));
        assert!(lines.add(a, 2));
        assert!(!lines.add(a, 1), "a line counts once");
        assert!(
            lines.add(b, 1),
            "the same line number of another file is another line"
        );
        assert!(
            !lines.add(PathId::UNKNOWN, 1),
            "a path the registry could not keep"
        );
        assert_eq!(lines.files().collect::<Vec<_>>(), vec![(a, 2), (b, 1)]);
    }

    #[test]
    fn a_full_set_counts_no_more() {
        let lines = LinesReached::new(1);
        lines.start();
        let file = PathId::from_index(0);
        let added = (1..=CAPACITY as u32 + 1000)
            .filter(|&line| lines.add(file, line))
            .count();
        assert!(added <= CAPACITY);
        assert_eq!(
            lines.files().collect::<Vec<_>>(),
            vec![(file, added as u32)]
        );
    }
}

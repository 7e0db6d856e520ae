//! Which comparisons were reported to libFuzzer lately, so that a site
//! comparing the same operands again and again costs a lookup, not a
//! report.
//!
//! libFuzzer learns two things from a comparison: its operands, kept in
//! tables of recent comparisons that mutations draw words from, and (with
//! `-use_value_profile`) a feature for how far apart they are. The same
//! operands at the same site give the same feature and the same table entry
//! each time, so reporting them again in the next input adds nothing but
//! the cost (a memcmp hook and the byte distance libFuzzer computes: a
//! third of what the comparison hooks cost rexml per input). A site keeps
//! being reported while its operands change, as they do when one side comes
//! from the input.
//!
//! The memory is a direct-mapped table: one slot per hash of (site,
//! operands), holding the rest of the hash and the epoch it was reported
//! in. A comparison is reported when its slot holds anything else: a pair
//! not seen this epoch, or another pair (a collision only repeats a
//! report). The epoch moves on every [`EPOCH_INPUTS`] inputs, so every
//! comparison the target still makes is reported again then and its
//! operands come back into libFuzzer's tables, from which other pairs may
//! have pushed them.
//!
//! Invariants: no allocation, no lock; used with the GVL held (from the
//! comparison hooks and between inputs), which guards the table.

use std::cell::UnsafeCell;

/// Slots in the table (a power of two).
const SLOTS: usize = 8192;
/// Bits of a slot that hold the epoch; the rest hold the hash's check bits.
const EPOCH_BITS: u32 = 12;
const EPOCH_MASK: u32 = (1 << EPOCH_BITS) - 1;
/// Inputs per epoch: the most inputs a repeated comparison goes unreported.
pub const EPOCH_INPUTS: u32 = 16;

struct Table {
    slots: [u32; SLOTS],
    /// The current epoch, never 0 (an empty slot is 0).
    epoch: u32,
    /// Inputs begun in this epoch.
    inputs: u32,
}

struct Shared(UnsafeCell<Table>);
// SAFETY: only used with the GVL held (module invariant).
unsafe impl Sync for Shared {}

static TABLE: Shared = Shared(UnsafeCell::new(Table {
    slots: [0; SLOTS],
    epoch: 1,
    inputs: 0,
}));

/// Whether the comparison whose (site, operands) hash is `hash` should be
/// reported: true the first time in an epoch, false when it was reported
/// already in this one. Records it.
#[inline(always)]
pub fn first_this_epoch(hash: u64) -> bool {
    // SAFETY: GVL held (module invariant): nobody else uses the table.
    let table = unsafe { &mut *TABLE.0.get() };
    let slot = (hash as usize) & (SLOTS - 1);
    let entry = ((hash >> 32) as u32 & !EPOCH_MASK) | table.epoch;
    if table.slots[slot] == entry {
        return false;
    }
    table.slots[slot] = entry;
    true
}

/// Before an input: every [`EPOCH_INPUTS`] inputs a new epoch begins, in
/// which every comparison is reported once again. The epoch counter wraps
/// after 4,095 epochs; the table is cleared then, so no slot of an old
/// epoch passes for the new one.
#[inline(always)]
pub fn before_input() {
    // SAFETY: GVL held (module invariant).
    let table = unsafe { &mut *TABLE.0.get() };
    table.inputs += 1;
    if table.inputs < EPOCH_INPUTS {
        return;
    }
    table.inputs = 0;
    table.epoch += 1;
    if table.epoch > EPOCH_MASK {
        table.slots.fill(0);
        table.epoch = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh table, held for the test (tests share the one process).
    fn fresh() -> crate::process::TestProcess {
        let process = crate::feedback::reset_for_tests();
        // SAFETY: the test process is held: nobody else uses the table.
        unsafe {
            *TABLE.0.get() = Table {
                slots: [0; SLOTS],
                epoch: 1,
                inputs: 0,
            }
        };
        process
    }

    fn next_epoch() {
        for _ in 0..EPOCH_INPUTS {
            before_input();
        }
    }

    #[test]
    fn a_pair_is_reported_once_an_epoch() {
        let _process = fresh();
        let hash = 0x1234_5678_9abc_def0;
        assert!(first_this_epoch(hash));
        assert!(!first_this_epoch(hash));
        next_epoch();
        assert!(first_this_epoch(hash));
    }

    #[test]
    fn pairs_in_one_slot_are_each_reported() {
        let a = 0x0000_0001_0000_0005;
        let b = 0x0001_0000_0000_0005;
        let _process = fresh();
        assert!(first_this_epoch(a));
        assert!(first_this_epoch(b));
        assert!(first_this_epoch(a));
    }

    #[test]
    fn the_epoch_wraps_without_a_stale_slot_passing_for_new() {
        let _process = fresh();
        let hash = 0xfeed_0000_0000_0042;
        assert!(first_this_epoch(hash));
        for _ in 0..EPOCH_MASK {
            next_epoch();
        }
        assert!(first_this_epoch(hash));
    }
}

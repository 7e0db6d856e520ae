//! Failed pattern matches seen recently, so that the regexp model
//! ([`super::regex_model`]) runs again on a failure it has already modelled
//! only now and then.
//!
//! A fuzzer's inputs mostly repeat one another (a mutation changes a few
//! bytes), so a parser's pattern fails at the same call site on the same
//! bytes input after input, and what the model proposed for that failure
//! is already in libFuzzer's tables. A failure is fingerprinted by its site,
//! its pattern and the subject's bytes around the search start, and looked
//! up in a direct-mapped table: a fingerprint not there is fresh (and takes
//! the slot); a repeat is modelled once in [`REPEAT_EVERY`], so that its
//! proposal still varies over time. A collision between two fingerprints
//! only changes which failures are modelled, never a match's result.
//!
//! Invariants: a fixed static table; no allocation, no lock (used with the
//! GVL held: relaxed loads and stores, no read-modify-write needed).

use crate::coverage::location::mix;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Fingerprints remembered (a power of two).
const SLOTS: usize = 4096;

/// A repeated failure is modelled once in this many repeats.
pub const REPEAT_EVERY: u32 = 16;

/// Subject bytes before the search start that count in a fingerprint
/// (what anchors and look-behinds there read).
const BEFORE: usize = 16;

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicU64 = AtomicU64::new(0);
static RECENT: [AtomicU64; SLOTS] = [EMPTY; SLOTS];

/// Repeats seen since the last modelled one (all fingerprints together).
static REPEATS: AtomicU32 = AtomicU32::new(0);

/// Whether the failure of `pattern` (a `VALUE` or any other id of it) at
/// `site` on `window` (the subject up to where the model reads), searched
/// from `from`, is worth modelling: fresh, or a repeat whose turn it is.
pub fn worth_modelling(
    site: u64,
    pattern: u64,
    window: &[u8],
    from: usize,
    anchored: bool,
) -> bool {
    let print = fingerprint(site, pattern, window, from, anchored);
    let slot = &RECENT[(print as usize) & (SLOTS - 1)];
    if slot.load(Ordering::Relaxed) != print {
        slot.store(print, Ordering::Relaxed);
        return true;
    }
    let repeats = REPEATS.load(Ordering::Relaxed).wrapping_add(1);
    REPEATS.store(repeats, Ordering::Relaxed);
    repeats % REPEAT_EVERY == 0
}

/// The failure's fingerprint (never 0, the empty slot).
fn fingerprint(site: u64, pattern: u64, window: &[u8], from: usize, anchored: bool) -> u64 {
    let start = from.saturating_sub(BEFORE).min(window.len());
    let mut hash = mix(site ^ pattern.rotate_left(29) ^ ((from as u64) << 1) ^ u64::from(anchored));
    let mut chunks = window[start..].chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        hash ^= hash >> 29;
    }
    for &byte in chunks.remainder() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    mix(hash ^ window.len() as u64) | 1
}

/// Test only: no failure seen (see [`crate::feedback::reset_for_tests`]).
#[cfg(test)]
pub(super) fn reset_for_tests() {
    for slot in &RECENT {
        slot.store(0, Ordering::Relaxed);
    }
    REPEATS.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_modelled_once_in_repeat_every() {
        let _process = crate::feedback::reset_for_tests();
        let window = b"GET /index.html HTTP/1.1";
        assert!(worth_modelling(7, 11, window, 4, false));
        let modelled = (0..REPEAT_EVERY * 4)
            .filter(|_| worth_modelling(7, 11, window, 4, false))
            .count();
        assert_eq!(modelled, 4);
    }

    #[test]
    fn fingerprints_tell_failures_apart() {
        let base = fingerprint(1, 2, b"abcdefghijklmnopqrstuvwxyz", 3, false);
        assert_ne!(
            base,
            fingerprint(9, 2, b"abcdefghijklmnopqrstuvwxyz", 3, false)
        );
        assert_ne!(
            base,
            fingerprint(1, 9, b"abcdefghijklmnopqrstuvwxyz", 3, false)
        );
        assert_ne!(
            base,
            fingerprint(1, 2, b"abcdefghijklmnopqrstuvwxyZ", 3, false)
        );
        assert_ne!(
            base,
            fingerprint(1, 2, b"abcdefghijklmnopqrstuvwxyz", 4, false)
        );
        assert_ne!(
            base,
            fingerprint(1, 2, b"abcdefghijklmnopqrstuvwxyz", 3, true)
        );
        assert_ne!(
            base,
            fingerprint(1, 2, b"abcdefghijklmnopqrstuvwxy", 3, false)
        );
    }
}

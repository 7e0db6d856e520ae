//! The values the target wanted that a typed input can hold: a Hash key
//! the code looked up and missed (`params.require(:export)`), a canary form
//! a detector's sink was guided towards (`;ruzzy`). A typed target's pools
//! (`Gen.from(list)`) name the vocabulary once, before fuzzing
//! ([`set_vocabulary`]); a wanted value in it is remembered by its number
//! in a ring of the most recent distinct ones ([`record`]), and the structure-aware
//! mutator sets a pool choice of an input to one of them ([`pick`]).
//! libFuzzer's own comparison tables cannot: they write bytes, and a pool
//! choice is an index.
//!
//! Invariants: the vocabulary is set at most once, before the driver
//! starts, and only read afterwards; [`record`] and [`pick`] allocate
//! nothing and take no lock (the ring is atomics: a slot read while another
//! thread writes it holds one number or the other, either a valid one).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Each word's number.
static VOCABULARY: OnceLock<HashMap<Box<[u8]>, u32>> = OnceLock::new();
/// How many recent wanted values are kept.
const SLOTS: usize = 64;
/// The ring: a word's number + 1, 0 for an empty slot.
static RING: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];
/// How many values were recorded (the next slot, modulo SLOTS).
static RECORDED: AtomicUsize = AtomicUsize::new(0);
/// The last value recorded + 1: the same key looked up again and again
/// takes one slot.
static LAST: AtomicU32 = AtomicU32::new(0);

/// Sets the vocabulary: `words[n]` is word number n. Once per process;
/// empty words are left out.
pub fn set_vocabulary(words: &[Vec<u8>]) {
    let numbered = words
        .iter()
        .enumerate()
        .filter(|(_, word)| !word.is_empty())
        .map(|(number, word)| (word.clone().into_boxed_slice(), number as u32))
        .collect();
    let _ = VOCABULARY.set(numbered);
}

/// Whether a vocabulary was set (the hooks skip their work otherwise).
#[inline(always)]
pub fn active() -> bool {
    VOCABULARY.get().is_some()
}

/// Remembers `word` if it is in the vocabulary and not in the ring
/// already: the ring holds the last SLOTS distinct words, so a word wanted
/// at every input (a canary form guided at a sink the framework reaches
/// each request, a key it always misses) takes one slot, and a word only
/// some inputs miss (the key of one route's params) stays beside it.
#[inline]
pub fn record(word: &[u8]) {
    let Some(number) = VOCABULARY.get().and_then(|vocabulary| vocabulary.get(word)) else {
        return;
    };
    let stored = number + 1;
    if LAST.swap(stored, Ordering::Relaxed) == stored
        || RING
            .iter()
            .any(|slot| slot.load(Ordering::Relaxed) == stored)
    {
        return;
    }
    let slot = RECORDED.fetch_add(1, Ordering::Relaxed) % SLOTS;
    RING[slot].store(stored, Ordering::Relaxed);
}

/// The number of one of the recent wanted words, chosen by `random`; None
/// when there is none yet.
pub fn pick(random: u64) -> Option<u32> {
    let filled = RECORDED.load(Ordering::Relaxed).min(SLOTS);
    if filled == 0 {
        return None;
    }
    let stored = RING[random as usize % filled].load(Ordering::Relaxed);
    stored.checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_words_of_the_vocabulary_are_kept_and_a_word_takes_one_slot() {
        set_vocabulary(&[b"export".to_vec(), Vec::new(), b";ruzzy".to_vec()]);
        assert!(active());
        let before = RECORDED.load(Ordering::Relaxed);
        record(b"controller");
        record(b"");
        assert_eq!(
            RECORDED.load(Ordering::Relaxed),
            before,
            "not in the vocabulary"
        );
        record(b"export");
        record(b"export");
        record(b";ruzzy");
        record(b"export");
        assert_eq!(
            RECORDED.load(Ordering::Relaxed),
            before + 2,
            "a word in the ring is not recorded again"
        );
        let picked: std::collections::BTreeSet<_> = (0..64).filter_map(pick).collect();
        assert_eq!(picked, [0, 2].into());
    }
}

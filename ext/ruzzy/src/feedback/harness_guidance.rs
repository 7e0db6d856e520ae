//! The guidance API of harnesses (`Ruzzy.guide_equal`, `guide_include`,
//! `explore_state`, `maximize`, `minimize`; lib/ruzzy/guidance.rb), after
//! Jazzer's: feedback about what coverage cannot see. `guide_equal` and
//! `guide_include` report a comparison, at a site of the harness's own
//! choosing (its `id`), to libFuzzer's comparison hooks; `explore_state`
//! counts a counter keyed by (id, state), so that every new state is a new
//! feature; `maximize` and `minimize` count the first `steps + 1` counters of
//! their id, so that only a value past the best one so far adds features.
//!
//! Invariants: called with the GVL held by lib/ruzzy/guidance.rb, which
//! checked the arguments; allocates nothing and takes no lock; does nothing
//! before coverage starts (outside fuzzing), so a harness can call them
//! unconditionally.

use crate::coverage::hook;
use crate::coverage::location::mix;
use crate::feedback::compare_sites::{self, SiteId};
use crate::rb::value::{self, Frame};
use magnus::rb_sys::AsRawValue;
use magnus::Value;

/// Most counters one `maximize` or `minimize` id counts.
pub const MAX_STEPS: usize = 256;

/// Mixed into a `maximize`/`minimize` id ("steps" in ASCII), so that its
/// counters differ from those `explore_state` keys by the same id.
const STEPS_SALT: u64 = 0x7374_6570_7300_0000;

/// `Ruzzy::Native._guide_equal_at(current, target, id)`: two Strings (their
/// bytes) or two Integers (their 64-bit values) compared at site `id`.
pub fn guide_equal_at(current: Value, target: Value, id: i64) {
    if hook::get().is_none() {
        return;
    }
    let site = SiteId::for_id(id as u64);
    // SAFETY: called by the interpreter as a function; no Ruby code runs.
    let frame = unsafe { Frame::enter() };
    if let (Some(a), Some(b)) = (
        frame.string_bytes(current.as_raw()),
        frame.string_bytes(target.as_raw()),
    ) {
        compare_sites::bytes(site, a, b);
    } else if let (Some(a), Some(b)) = (
        value::integer_bits(current.as_raw()),
        value::integer_bits(target.as_raw()),
    ) {
        compare_sites::cmp8(site, a, b);
    }
}

/// `Ruzzy::Native._guide_include_at(haystack, needle, id)`: a search for the
/// String `needle` in the String `haystack` at site `id`.
pub fn guide_include_at(haystack: Value, needle: Value, id: i64) {
    if hook::get().is_none() {
        return;
    }
    // SAFETY: called by the interpreter as a function; no Ruby code runs.
    let frame = unsafe { Frame::enter() };
    if let (Some(haystack), Some(needle)) = (
        frame.string_bytes(haystack.as_raw()),
        frame.string_bytes(needle.as_raw()),
    ) {
        compare_sites::substring(SiteId::for_id(id as u64), haystack, needle);
    }
}

/// `Ruzzy::Native._explore_state(state, id)`: counts the counter of
/// (`id`, `state`).
pub fn explore_state(state: i64, id: i64) {
    hook::touch_guidance(mix(mix(id as u64) ^ state as u64));
}

/// `Ruzzy::Native._count_steps(steps, id)`: counts the counters of `id`'s
/// steps 0 to `steps` (at most [`MAX_STEPS`]).
pub fn count_steps(steps: usize, id: i64) {
    let base = mix(id as u64 ^ STEPS_SALT);
    for step in 0..=steps.min(MAX_STEPS - 1) {
        if !hook::touch_guidance(mix(base ^ step as u64)) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn does_nothing_before_coverage_starts() {
        // No coverage in unit tests: every call returns at once.
        explore_state(1, 2);
        count_steps(usize::MAX, 3);
        assert!(hook::get().is_none());
    }
}

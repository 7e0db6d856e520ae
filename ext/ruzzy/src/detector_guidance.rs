//! Comparison feedback that steers inputs towards the detectors' canaries
//! (`Ruzzy._guide_towards`, `Ruzzy._guide_equal`), as Jazzer's
//! `guideTowardsContainment` and `guideTowardsEquality` do: a sink that got
//! a String reports it against the canary forms that would make it a
//! finding, and libFuzzer inserts them into new inputs. Each form goes both
//! to libFuzzer's memmem table (1,024 slots, shared with every substring
//! search) and to its table of recent byte comparisons (32 slots, which
//! its mutations draw from far more often).
//!
//! Invariants: called by detector hooks (Ruby methods of ruzzy's own, so at
//! the unknown comparison site) with the GVL held; allocates nothing;
//! anything but Strings is ignored.

use crate::compare_hooks::string_bytes;
use crate::compare_sites::{self, SiteId};
use magnus::rb_sys::AsRawValue;
use magnus::{RArray, Value};

/// Reports a search for each String of `needles` in `value`, and a
/// comparison of `value` with it.
pub fn guide_towards(value: Value, needles: RArray) {
    let Some(haystack) = string_bytes(value.as_raw()) else {
        return;
    };
    for index in 0..needles.len() {
        let Ok(needle) = needles.entry::<Value>(index as isize) else {
            continue;
        };
        if let Some(needle) = string_bytes(needle.as_raw()) {
            compare_sites::substring(SiteId::UNKNOWN, haystack, needle);
            compare_sites::bytes(SiteId::UNKNOWN, haystack, needle);
        }
    }
}

/// Reports a comparison of the start of `value` with `expected`.
pub fn guide_equal(value: Value, expected: Value) {
    let (Some(value), Some(expected)) = (
        string_bytes(value.as_raw()),
        string_bytes(expected.as_raw()),
    ) else {
        return;
    };
    let start = &value[..value.len().min(expected.len())];
    compare_sites::bytes(SiteId::UNKNOWN, start, expected);
}

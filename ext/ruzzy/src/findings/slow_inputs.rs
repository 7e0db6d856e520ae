//! Inputs that run far longer than usual: a denial of service seen before
//! it becomes a timeout.
//!
//! Every input's time goes into a histogram of powers of two; an input that
//! takes at least [`MIN_SLOW_NS`] and [`SLOW_FACTOR`] times the median, and
//! more than 1.1 times the slowest one reported so far, is reported by
//! `Ruzzy::Finding.report_slow_input` and kept as `slow-unit-<sha1>`, as
//! libFuzzer keeps inputs slower than `-report_slow_units` (10 s by default,
//! in whole seconds: too coarse for inputs that normally take microseconds).
//! It is not a crash: fuzzing goes on. A slow input is run once more first
//! and reported only if it is slow again (code loaded on first use is a
//! one-time cost, not a denial of service).
//!
//! Invariants: the per-input cost is two clock reads and one increment; only
//! the thread that runs the target touches the state (the GVL holder).

use crate::rb;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// An input slower than this many times the median is worth a look...
pub const SLOW_FACTOR: u64 = 100;
/// ...if it also takes at least this long (GC pauses stay below it).
pub const MIN_SLOW_NS: u64 = 250_000_000;
/// Inputs run before the median is trusted.
const WARM_UP: u64 = 1000;

static BUCKETS: [AtomicU32; 64] = [const { AtomicU32::new(0) }; 64];
static RUNS: AtomicU64 = AtomicU64::new(0);
static SLOWEST_REPORTED_NS: AtomicU64 = AtomicU64::new(0);

fn bucket(ns: u64) -> usize {
    (u64::BITS - ns.max(1).leading_zeros() - 1) as usize
}

/// The median input time so far, in ns (the middle of its power-of-two
/// bucket), or None before [`WARM_UP`] inputs.
pub fn median_ns() -> Option<u64> {
    let runs = RUNS.load(Ordering::Relaxed);
    if runs < WARM_UP {
        return None;
    }
    let mut seen = 0u64;
    for (index, count) in BUCKETS.iter().enumerate() {
        seen += u64::from(count.load(Ordering::Relaxed));
        if seen * 2 >= runs {
            return Some((1u64 << index) + (1u64 << index) / 2);
        }
    }
    None
}

/// Counts an input that took `ns`; returns the median when the input is
/// slow enough to report.
#[inline(always)]
pub fn record(ns: u64) -> Option<u64> {
    RUNS.fetch_add(1, Ordering::Relaxed);
    let counter = &BUCKETS[bucket(ns)];
    counter.store(
        counter.load(Ordering::Relaxed).saturating_add(1),
        Ordering::Relaxed,
    );
    if ns < MIN_SLOW_NS {
        return None;
    }
    slow(ns)
}

#[cold]
fn slow(ns: u64) -> Option<u64> {
    let median = median_ns()?;
    let slowest = SLOWEST_REPORTED_NS.load(Ordering::Relaxed);
    if ns < median.saturating_mul(SLOW_FACTOR) || ns * 10 <= slowest * 11 {
        return None;
    }
    Some(median)
}

/// Whether a second run of a slow input, `ns` long, is slow too.
pub fn slow_again(ns: u64, median_ns: u64) -> bool {
    ns >= MIN_SLOW_NS && ns >= median_ns.saturating_mul(SLOW_FACTOR)
}

/// Reports `input` (which took `ns`, against a median of `median_ns`)
/// through Ruby. Never raises; a failure to report is only printed.
pub fn report(input: &[u8], ns: u64, median_ns: u64) {
    SLOWEST_REPORTED_NS.store(ns, Ordering::Relaxed);
    // We hold the GVL: the target just returned on this thread.
    let reported = rb::protect(|ruby| {
        let args = [
            ruby.binary_string(input),
            ruby.float(ns as f64 / 1e9),
            ruby.float(median_ns as f64 / 1e9),
        ];
        ruby.call_class_method(crate::findings::FINDING, "report_slow_input", &args)
    });
    if reported.is_err() {
        crate::process::output::write_stderr(b"==ruzzy== a slow input could not be reported\n");
    }
}

/// Test only: no input timed yet (see [`crate::findings::reset_for_tests`]).
#[cfg(test)]
pub(super) fn reset_for_tests() {
    for counter in &BUCKETS {
        counter.store(0, Ordering::Relaxed);
    }
    RUNS.store(0, Ordering::Relaxed);
    SLOWEST_REPORTED_NS.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(1024), 10);
        assert_eq!(bucket(2047), 10);
        assert_eq!(bucket(u64::MAX), 63);
    }

    #[test]
    fn only_inputs_far_above_the_median_are_reported() {
        let _process = crate::findings::reset_for_tests();
        assert_eq!(record(MIN_SLOW_NS * 10), None, "no median yet");
        for _ in 0..WARM_UP {
            record(10_000);
        }
        let median = median_ns().unwrap();
        assert!((8_192..16_384).contains(&median), "{median}");
        assert_eq!(record(1_000_000), None, "fast in absolute terms");
        assert_eq!(record(MIN_SLOW_NS), Some(median));
        assert_eq!(record(MIN_SLOW_NS), Some(median), "not reported yet");
        SLOWEST_REPORTED_NS.store(MIN_SLOW_NS, Ordering::Relaxed);
        assert_eq!(record(MIN_SLOW_NS), None, "not slower than the last report");
        assert_eq!(record(MIN_SLOW_NS * 2), Some(median));
        assert!(slow_again(MIN_SLOW_NS, median));
        assert!(!slow_again(MIN_SLOW_NS / 2, median), "fast the second time");
    }

    #[test]
    fn the_median_waits_for_the_warm_up() {
        let _process = crate::findings::reset_for_tests();
        for _ in 1..WARM_UP {
            record(1_000);
        }
        assert_eq!(median_ns(), None);
        record(1_000);
        assert_eq!(median_ns(), Some(768), "the middle of 512..1024");
    }
}

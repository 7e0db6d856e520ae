//! Ruby coverage events to libFuzzer edge counters.
//!
//! `Ruzzy._start_coverage(map_size, includes, excludes)` allocates the edge
//! map and path registry, registers the counters and PC table with the
//! running libFuzzer, and adds one event hook for the interpreter's internal
//! line and branch coverage events. Those events fire only for code compiled
//! after `Coverage.setup` (done by the Ruby caller), so code loaded earlier,
//! ruzzy itself and RubyGems included, is never instrumented.
//!
//! Invariants: started at most once per process; the hook allocates nothing
//! and takes no lock (see `location`, `path_registry`, `sancov_8bit`).

use crate::engine;
use crate::iseq_cache::{IseqCache, IseqInfo};
use crate::location::{self, Site};
use crate::path_registry::{hash_bytes, PathId, PathRegistry};
use crate::sancov_8bit::EdgeMap;
use magnus::{Error, RArray, RHash, Ruby};
use rb_sys::{rb_trace_arg_t, VALUE};
use std::sync::OnceLock;

/// RUBY_EVENT_COVERAGE_LINE | RUBY_EVENT_COVERAGE_BRANCH (internal events).
const COVERAGE_EVENTS: u32 = 0x01_0000 | 0x02_0000;

/// RUBY_EVENT_THREAD_BEGIN: a Ruby thread starts, possibly on a native
/// thread Ruby reuses, whose previous location belongs to an earlier one.
const THREAD_BEGIN: u32 = 0x0400;

pub struct Coverage {
    pub map: EdgeMap,
    pub paths: PathRegistry,
    iseqs: IseqCache,
}

static COVERAGE: OnceLock<Coverage> = OnceLock::new();

/// The running coverage state, if coverage was started.
pub fn get() -> Option<&'static Coverage> {
    COVERAGE.get()
}

/// `Ruzzy._start_coverage(map_size, includes, excludes)`.
pub fn start(
    ruby: &Ruby,
    map_size: usize,
    includes: Vec<String>,
    excludes: Vec<String>,
) -> Result<bool, Error> {
    if COVERAGE.get().is_some() {
        return Ok(false);
    }
    let coverage = Coverage {
        map: EdgeMap::new(map_size),
        paths: PathRegistry::new(into_bytes(includes), into_bytes(excludes)),
        iseqs: IseqCache::new(),
    };
    if COVERAGE.set(coverage).is_err() {
        return Ok(false);
    }
    let coverage = COVERAGE
        .get()
        .ok_or_else(|| Error::new(ruby.exception_runtime_error(), "coverage state lost"))?;
    engine::get().register_coverage(&coverage.map);
    crate::rb::add_raw_event_hook(on_coverage_event, COVERAGE_EVENTS);
    crate::rb::add_raw_event_hook(on_thread_begin, THREAD_BEGIN);
    Ok(true)
}

/// `Ruzzy._coverage_info`: facts about the running coverage, for docs and tests.
pub fn info(ruby: &Ruby) -> Result<Option<RHash>, Error> {
    let Some(coverage) = get() else {
        return Ok(None);
    };
    let hash = ruby.hash_new();
    hash.aset(ruby.to_symbol("map_size"), coverage.map.len())?;
    hash.aset(ruby.to_symbol("precise"), location::precise())?;
    hash.aset(ruby.to_symbol("layout"), location::layout())?;
    let reached: Vec<usize> = (0..coverage.map.len())
        .filter(|&i| coverage.map.first_hit(i).is_some())
        .collect();
    hash.aset(ruby.to_symbol("counters_ever_hit"), reached.len())?;
    Ok(Some(hash))
}

/// `Ruzzy._counters_hit`: indices of counters that are non-zero right now.
pub fn counters_hit(ruby: &Ruby) -> RArray {
    let array = ruby.ary_new();
    if let Some(coverage) = get() {
        for (index, counter) in coverage.map.counters.iter().enumerate() {
            if counter.load(std::sync::atomic::Ordering::Relaxed) != 0 {
                let _ = array.push(index);
            }
        }
    }
    array
}

/// `Ruzzy._clear_counters`: zeroes every counter (what libFuzzer does
/// between inputs), for replaying inputs outside libFuzzer.
pub fn clear_counters() {
    if let Some(coverage) = get() {
        for counter in coverage.map.counters.iter() {
            counter.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        coverage.map.reset_previous();
    }
}

/// `Ruzzy._counter_location(index)`: "path:line" of the first location
/// that reached a counter, or nil.
pub fn counter_location(index: usize) -> Option<String> {
    describe(index).map(|(path, line)| format!("{}:{line}", String::from_utf8_lossy(path)))
}

/// The (path, line) a counter stands for, if it was ever reached.
pub fn describe(index: usize) -> Option<(&'static [u8], u32)> {
    let coverage = get()?;
    let (path, line) = coverage.map.first_hit(index)?;
    Some((coverage.paths.name(path), line))
}

fn into_bytes(patterns: Vec<String>) -> Vec<Vec<u8>> {
    patterns.into_iter().map(String::into_bytes).collect()
}

/// Counts a comparison site as covered. Ruby's coverage has no branches
/// for `&&` and `||`, so `a == 1 && b == 2` is one branch; counting each
/// comparison site that runs makes passing the first comparison new
/// coverage, and the fuzzer keeps the input that did.
#[inline(always)]
pub fn reach_compare_site(location: u64) {
    if let Some(coverage) = get() {
        coverage.map.touch(location ^ COMPARE_SITE_SALT);
    }
}

/// Keeps comparison-site counters apart from edge counters of the same
/// location.
const COMPARE_SITE_SALT: u64 = 0x5bd1_e995_c0ff_ee00;

/// Called by the driver callback before each input.
#[inline(always)]
pub fn begin_input() {
    if let Some(coverage) = get() {
        coverage.map.reset_previous();
    }
}

unsafe extern "C" fn on_thread_begin(_data: VALUE, _arg: *mut rb_trace_arg_t) {
    if let Some(coverage) = get() {
        coverage.map.reset_previous();
    }
}

unsafe extern "C" fn on_coverage_event(_data: VALUE, arg: *mut rb_trace_arg_t) {
    let Some(coverage) = get() else { return };
    // SAFETY: `arg` is the trace argument of this hook call (RAW_ARG).
    let Some(site) = (unsafe { location::site(arg) }) else {
        return;
    };
    let cached = site.iseq.and_then(|iseq| coverage.iseqs.get(iseq));
    // SAFETY: the site's path is read before this hook returns.
    let Some(iseq) = cached.or_else(|| unsafe { resolve(coverage, &site) }) else {
        return;
    };
    if !iseq.included {
        return;
    }
    let (index, first) = coverage.map.hit(location::mix(iseq.base ^ site.offset));
    if first {
        // SAFETY: as above; lineno is computed only on a counter's first hit.
        unsafe { remember(coverage, index, iseq.path, arg) };
    }
}

/// The per-iseq part of a location: path hash, registry entry, inclusion.
///
/// # Safety
/// Inside the coverage hook that produced `site`.
#[cold]
unsafe fn resolve(coverage: &Coverage, site: &Site) -> Option<IseqInfo> {
    // SAFETY (caller): the path String is alive during the hook.
    let path = unsafe { location::string_bytes(site.path)? };
    let path_hash = hash_bytes(path);
    let (path, included) = coverage.paths.lookup(path_hash, path);
    let info = IseqInfo {
        base: location::base(path_hash, site.start),
        path,
        included,
    };
    if let Some(iseq) = site.iseq {
        coverage.iseqs.put(iseq, info);
    }
    Some(info)
}

#[cold]
unsafe fn remember(coverage: &Coverage, index: usize, path: PathId, arg: *mut rb_trace_arg_t) {
    // SAFETY (caller): live trace argument; rb_tracearg_lineno returns a Fixnum.
    let line = unsafe { rb_sys::FIX2LONG(rb_sys::rb_tracearg_lineno(arg)) };
    coverage
        .map
        .remember(index, path, line.clamp(1, i64::from(u32::MAX)) as u32);
}

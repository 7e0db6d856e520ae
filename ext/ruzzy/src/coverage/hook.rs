//! Ruby coverage events to libFuzzer edge counters.
//!
//! `Ruzzy::Native._start_coverage(map_size, includes, excludes)` allocates the edge
//! map and locator and adds one event hook for the interpreter's internal
//! line and branch coverage events. Those events fire only for code compiled
//! after `Coverage.setup` (done by the Ruby caller), so code loaded earlier,
//! ruzzy itself and RubyGems included, is never instrumented. When fuzzing
//! starts, `Ruzzy::Native._fit_coverage` sizes the map to the code loaded by then
//! and the driver registers the counters and PC table with libFuzzer.
//!
//! Invariants: started at most once per process; the map's size is fixed
//! once registered; the hook allocates nothing and takes no lock (see
//! `location`, `locator`, `sancov_8bit`).

use crate::coverage::iseq_cache::IseqInfo;
use crate::coverage::lines_reached::LinesReached;
use crate::coverage::location::{self, Site};
use crate::coverage::locator::{self, Locator};
use crate::coverage::path_registry::{PathId, PathRegistry};
use crate::coverage::quiet;
use crate::coverage::sancov_8bit::{self, EdgeMap};
use crate::process::libfuzzer;
use crate::rb::{self, value::Frame};
use magnus::{rb_sys::AsRawValue, Error, RArray, RHash, Ruby, Value};
use rb_sys::{rb_trace_arg_t, VALUE};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// RUBY_EVENT_COVERAGE_LINE (internal event): once per line and process
/// (one-shot lines, see `lib/ruzzy/feedback/coverage.rb`).
const LINE_EVENT: u32 = 0x01_0000;

/// RUBY_EVENT_COVERAGE_BRANCH (internal event): every time an arm runs.
const BRANCH_EVENT: u32 = 0x02_0000;

/// RUBY_EVENT_THREAD_BEGIN: a Ruby thread starts, possibly on a native
/// thread Ruby reuses, whose previous location belongs to an earlier one.
const THREAD_BEGIN: u32 = 0x0400;

pub struct Coverage {
    pub map: EdgeMap,
    pub locator: &'static Locator,
    /// The lines the inputs ran, apart from the counters their methods share.
    pub lines: LinesReached,
    /// Started without a size: the map is fitted to the code.
    fitted: bool,
    registered: AtomicBool,
}

static COVERAGE: OnceLock<Coverage> = OnceLock::new();

/// The running coverage state, if coverage was started.
pub fn get() -> Option<&'static Coverage> {
    COVERAGE.get()
}

/// `Ruzzy::Native._start_coverage(map_size, includes, excludes)`: `map_size`
/// counters, or nil for a map fitted to the code when fuzzing starts
/// ([`fit`]).
pub fn start(map_size: Option<usize>, includes: Vec<String>, excludes: Vec<String>) -> bool {
    if COVERAGE.get().is_some() {
        return false;
    }
    let Some(locator) = locator::init(PathRegistry::new(
        into_bytes(includes),
        into_bytes(excludes),
    )) else {
        return false;
    };
    let coverage = Coverage {
        map: EdgeMap::new(map_size.unwrap_or(sancov_8bit::MAX_FITTED_SIZE)),
        lines: LinesReached::new(locator.paths.capacity()),
        locator,
        fitted: map_size.is_none(),
        registered: AtomicBool::new(false),
    };
    if COVERAGE.set(coverage).is_err() {
        return false;
    }
    quiet::prepare();
    if crate::process::internal_error::panic_injected_at("coverage") {
        rb::add_raw_event_hook(panicking_event, LINE_EVENT | BRANCH_EVENT);
    } else {
        rb::add_raw_event_hook(on_line_event, LINE_EVENT);
        rb::add_raw_event_hook(on_branch_event, BRANCH_EVENT);
    }
    rb::add_raw_event_hook(on_thread_begin, THREAD_BEGIN);
    true
}

/// `Ruzzy::Native._fit_coverage(units)`: uses as many counters as `units` of
/// instrumented code (executable lines and branch arms) need, or the
/// default number when `units` is nil. Returns the number of counters,
/// or nil when there is nothing to fit: coverage is not running, was
/// started with a size of its own, or is already registered.
pub fn fit(units: Option<usize>) -> Option<usize> {
    let coverage = get()?;
    if !coverage.fitted || coverage.registered.load(Ordering::Relaxed) {
        return None;
    }
    let size = units.map_or(sancov_8bit::DEFAULT_SIZE, sancov_8bit::fitted_size);
    coverage.map.fit(size);
    Some(coverage.map.len())
}

/// Registers the counters in use with libFuzzer, once, before the driver
/// starts; the map's size is fixed from then on, and the lines the inputs
/// run count from then on. Returns whether coverage is running (there is a
/// map).
pub fn register() -> bool {
    let Some(coverage) = get() else {
        return false;
    };
    if !coverage.registered.swap(true, Ordering::SeqCst) {
        coverage.map.register_with(libfuzzer::get());
        coverage.lines.start();
    }
    true
}

/// `RUBY_EVENT_HOOK_FLAG_SAFE | RUBY_EVENT_HOOK_FLAG_RAW_ARG` (ruby/debug.h),
/// the flags Ruby's own coverage counters are added with.
const RUBY_COUNTER_FLAGS: u32 = 0x01 | 0x04;

/// `Ruzzy::Native._stop_ruby_branch_counter(ractor)`: removes the event
/// hook with which Ruby's own `Coverage` counts branches (`thread.c`'s
/// `update_branch_coverage`, added by `Coverage.resume`), which costs
/// about as much per branch as ours and whose counts fuzzing never reads.
/// Only when the interpreter layout reads the running ractor's hook list
/// (`ractor` is `Ractor.current`), finds ours there, and finds exactly one
/// other hook of Ruby's shape for branch events; returns whether it was
/// removed. The caller makes sure that it set up Ruby's coverage itself.
pub fn stop_ruby_branch_counter(ractor: Value) -> bool {
    if get().is_none() || !location::precise() {
        return false;
    }
    let ours = on_branch_event as *const std::ffi::c_void;
    let (mut found_ours, mut theirs, mut others) = (false, None, 0);
    // SAFETY: called by Ruby (GVL held); nothing changes the list meanwhile.
    let read = unsafe {
        rb::interpreter_layout::each_global_hook(ractor.as_raw(), |hook| {
            if hook.events != BRANCH_EVENT {
                return;
            }
            if hook.func == ours {
                found_ours = true;
            } else if hook.flags == RUBY_COUNTER_FLAGS && hook.data == rb::value::QNIL {
                theirs = Some(hook.func);
                others += 1;
            }
        })
    };
    let Some(func) = theirs.filter(|_| read && found_ours && others == 1) else {
        return false;
    };
    // SAFETY: `func` is the function of a live event hook, as Ruby
    // registered it.
    unsafe { rb::remove_event_hook(func) }
}

/// `Ruzzy::Native._instrumented_path?(path)`: whether the include and exclude
/// patterns let coverage instrument `path` (false when coverage is off).
pub fn instrumented_path(path: String) -> bool {
    get().is_some_and(|coverage| coverage.locator.paths.decide(path.as_bytes()))
}

/// `Ruzzy::Native._coverage_info`: facts about the running coverage, for docs and tests.
pub fn info(ruby: &Ruby) -> Result<Option<RHash>, Error> {
    let Some(coverage) = get() else {
        return Ok(None);
    };
    let hash = ruby.hash_new();
    hash.aset(ruby.to_symbol("map_size"), coverage.map.len())?;
    hash.aset(ruby.to_symbol("fitted"), coverage.fitted)?;
    hash.aset(ruby.to_symbol("precise"), location::precise())?;
    hash.aset(ruby.to_symbol("layout"), location::layout())?;
    let reached: Vec<usize> = (0..coverage.map.len())
        .filter(|&i| coverage.map.first_hit(i).is_some())
        .collect();
    hash.aset(ruby.to_symbol("counters_ever_hit"), reached.len())?;
    if let Some(facts) = quiet::info() {
        let names = [
            "quiet_seconds",
            "quiet_iseqs_off",
            "quiet_switched_off",
            "quiet_switched_on",
            "quiet_windows",
            "quiet_on_elsewhere",
            "quiet_failed",
            "quiet_batches",
            "quiet_arms_kept",
            "quiet_event_share",
            "quiet_event_ns",
            "quiet_trials",
            "quiet_trial_saving",
        ];
        for (name, value) in names.into_iter().zip(facts) {
            if value.is_nan() {
                hash.aset(ruby.to_symbol(name), ruby.qnil())?;
            } else if matches!(
                name,
                "quiet_seconds" | "quiet_event_share" | "quiet_event_ns" | "quiet_trial_saving"
            ) {
                hash.aset(ruby.to_symbol(name), value)?;
            } else {
                hash.aset(ruby.to_symbol(name), value as u64)?;
            }
        }
    }
    Ok(Some(hash))
}

/// `Ruzzy::Native._reached`: `{path => [lines, counters]}`, for each
/// instrumented file the distinct lines the inputs ran ([`LinesReached`])
/// and the edge counters its code has reached so far (each counter counted
/// in the file that first reached it), for a campaign's status line. Not a
/// hot path: it walks the map.
pub fn reached(ruby: &Ruby) -> Result<RHash, Error> {
    let hash = ruby.hash_new();
    let Some(coverage) = get() else {
        return Ok(hash);
    };
    let mut files: BTreeMap<u32, (u32, usize)> = coverage
        .lines
        .files()
        .map(|(path, lines)| (path.index(), (lines, 0)))
        .collect();
    for (path, _) in (0..coverage.map.len()).filter_map(|i| coverage.map.first_hit(i)) {
        files.entry(path.index()).or_default().1 += 1;
    }
    for (index, (lines, counters)) in files {
        let name = coverage.locator.paths.name(PathId::from_index(index));
        hash.aset(ruby.str_from_slice(name), (lines, counters))?;
    }
    Ok(hash)
}

/// `Ruzzy::Native._counters_hit`: indices of counters that are non-zero right now.
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

/// `Ruzzy::Native._clear_counters`: zeroes every counter (what libFuzzer does
/// between inputs), for replaying inputs outside libFuzzer.
pub fn clear_counters() {
    if let Some(coverage) = get() {
        for counter in coverage.map.counters.iter() {
            counter.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        coverage.map.reset_previous();
    }
}

/// `Ruzzy::Native._counter_location(index)`: "path:line" of the first location
/// that reached a counter, or nil.
pub fn counter_location(index: usize) -> Option<String> {
    describe(index).map(|(path, line)| format!("{}:{line}", String::from_utf8_lossy(path)))
}

/// The (path, line) a counter stands for, if it was ever reached.
pub fn describe(index: usize) -> Option<(&'static [u8], u32)> {
    let coverage = get()?;
    let (path, line) = coverage.map.first_hit(index)?;
    Some((coverage.locator.paths.name(path), line))
}

fn into_bytes(patterns: Vec<String>) -> Vec<Vec<u8>> {
    patterns.into_iter().map(String::into_bytes).collect()
}

/// Keeps comparison-site counters apart from edge counters of the same
/// location.
const COMPARE_SITE_SALT: u64 = 0x5bd1_e995_c0ff_ee00;

/// Counts a comparison site of instrumented code (its location, as
/// `feedback::compare_sites::SiteId::location` has it; None: not located)
/// as covered. Ruby's coverage has no branches for `&&` and `||`, so
/// `a == 1 && b == 2` is one branch; counting each comparison site that
/// runs makes passing the first comparison new coverage, and the fuzzer
/// keeps the input that did.
#[inline(always)]
pub fn reach_compare_site(location: Option<u64>) {
    if let (Some(coverage), Some(location)) = (get(), location) {
        coverage.map.touch(location ^ COMPARE_SITE_SALT);
    }
}

/// Keeps the counters of keys found apart from those of comparison sites.
const KEY_FOUND_SALT: u64 = 0x6b65_7966_6f75_6e64;

/// Counts a Hash lookup site of instrumented code that found its key (as
/// [`reach_compare_site`] locates it), one counter per `key` (0 for a key
/// that is not one the code names): a request whose JSON body or params
/// now hold a key the app reads (`params[:task]`) is new coverage even
/// where reading it takes no new branch (and where one framework method
/// reads every key), so the fuzzer keeps it and goes on to mutate the
/// value the key gave.
#[inline(always)]
pub fn reach_key_found(location: Option<u64>, key: u64) {
    if let (Some(coverage), Some(location)) = (get(), location) {
        coverage
            .map
            .touch(location ^ KEY_FOUND_SALT ^ crate::coverage::location::mix(key));
    }
}

/// Keeps the guidance API's counters apart from edge counters.
const GUIDANCE_SALT: u64 = 0x6775_6964_616e_6365;

/// Counts the guidance API's counter `key` (already keyed by its id);
/// false when coverage has not started (not fuzzing).
#[inline(always)]
pub fn touch_guidance(key: u64) -> bool {
    match get() {
        Some(coverage) => {
            coverage.map.touch(key ^ GUIDANCE_SALT);
            true
        }
        None => false,
    }
}

/// The location every input reaches: the fuzz target was called.
const TARGET_CALLED: u64 = 0x7a72_7579_6361_6c6c;

/// Before each run of the target (the engine's lifecycle): forgets the previous
/// location and counts the call itself, so the first input libFuzzer keeps
/// always has a feature. Lines count once per process, so a target without
/// branches (a parser whose work is all in C, a rescue) would otherwise
/// reach no counter after libFuzzer's first, unrecorded, empty-input call,
/// and libFuzzer exits with "no interesting inputs were found" (clang 14's
/// copy; OSS-Fuzz's build check runs targets with `-runs=4`).
#[inline(always)]
pub fn before_input() {
    if let Some(coverage) = get() {
        coverage.map.reset_previous();
        coverage.map.touch(TARGET_CALLED);
    }
}

/// The coverage hook of `RUZZY_INJECT_PANIC=coverage`
/// ([`crate::process::internal_error`]): panics on the first event while the target
/// runs an input, where libFuzzer would save a crash.
unsafe extern "C" fn panicking_event(_data: VALUE, _arg: *mut rb_trace_arg_t) {
    if crate::process::target_state::running_here() {
        panic!("RUZZY_INJECT_PANIC=coverage");
    }
}

unsafe extern "C" fn on_thread_begin(_data: VALUE, _arg: *mut rb_trace_arg_t) {
    if let Some(coverage) = get() {
        coverage.map.reset_previous();
    }
}

/// A line reached for the first time in this process counts for its
/// method or block (not as an edge, and without becoming the previous
/// location), and so does every branch event in it: which input runs a line
/// first depends on the order inputs run in, so a per-line counter would
/// belong to that input forever (libFuzzer could never replace it with an
/// input that does the same and more), and `-merge` would find different
/// features in the same inputs depending on their order. While fuzzing,
/// the line is also one the inputs ran ([`LinesReached`]).
unsafe extern "C" fn on_line_event(_data: VALUE, arg: *mut rb_trace_arg_t) {
    let Some(coverage) = get() else { return };
    // SAFETY: `arg` is the trace argument of this hook call (RAW_ARG).
    unsafe {
        location::with_site(arg, |site| {
            record(coverage, &site, arg, true, |map, iseq, _| {
                map.touch(iseq_location(iseq))
            })
        })
    };
}

/// A branch arm counts as the edge from the previous branch arm, and for
/// its method or block.
unsafe extern "C" fn on_branch_event(_data: VALUE, arg: *mut rb_trace_arg_t) {
    quiet::count_event();
    let Some(coverage) = get() else { return };
    // SAFETY: `arg` is the trace argument of this hook call (RAW_ARG).
    unsafe {
        location::with_site(arg, |site| {
            record(coverage, &site, arg, false, |map, iseq, site| {
                map.touch(iseq_location(iseq));
                map.hit(locator::location(iseq, site))
            })
        })
    };
}

/// The location standing for a whole method or block.
#[inline(always)]
fn iseq_location(iseq: &IseqInfo) -> u64 {
    location::mix(iseq.base ^ ISEQ_SALT)
}

/// Keeps method/block counters apart from the edges into their first
/// instruction.
const ISEQ_SALT: u64 = 0x2545_f491_4f6c_dd1d;

/// Counts `site` with `count`; a `line_event` (one per line and process)
/// counts its line as run by the inputs while fuzzing.
///
/// # Safety
/// Inside the hook that produced `site` from `arg`.
#[inline(always)]
unsafe fn record(
    coverage: &Coverage,
    site: &Site,
    arg: *mut rb_trace_arg_t,
    line_event: bool,
    count: impl Fn(&EdgeMap, &IseqInfo, &Site) -> (usize, bool),
) {
    // SAFETY: by the caller's contract, inside an event hook, which runs no Ruby code.
    let frame = unsafe { Frame::enter() };
    let Some(iseq) = coverage.locator.iseq(&frame, site) else {
        return;
    };
    if !iseq.included {
        return;
    }
    if iseq.switched_off {
        if let Some(key) = site.iseq {
            // SAFETY: by the caller's contract, inside the hook `arg` was given to.
            unsafe { quiet::event_while_off(key, arg) };
        }
    }
    let (index, first) = count(&coverage.map, &iseq, site);
    if first {
        if let Some(key) = site.iseq {
            quiet::note_new(key, site.offset);
        }
    }
    if first || (line_event && coverage.lines.counting()) {
        // SAFETY: as above; lineno is computed only on a counter's first
        // hit and on a line's one event while fuzzing.
        unsafe { remember(coverage, first.then_some(index), iseq.path, arg) };
    }
}

/// Remembers the line of the event `arg`: where counter `index` (if any)
/// was first reached, and as a line the inputs ran.
#[cold]
unsafe fn remember(
    coverage: &Coverage,
    index: Option<usize>,
    path: PathId,
    arg: *mut rb_trace_arg_t,
) {
    // SAFETY: by the caller's contract, the live trace argument of this hook call.
    let line = unsafe { rb::trace_line(arg) };
    if let Some(index) = index {
        coverage.map.remember(index, path, line);
    }
    coverage.lines.add(path, line);
}

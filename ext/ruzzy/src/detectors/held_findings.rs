//! Findings of the bug detectors (`lib/ruzzy/detectors`), held until the
//! input ends, and the native half of the ReDoS detector.
//!
//! A detector that sees a dangerous call records its finding here
//! (`Ruzzy::Native._detector_report`) before raising it at the call, so the code
//! under test cannot hide it with a `rescue`: the callback takes it when
//! the target returns, whatever the target did with the exception.
//!
//! ReDoS, on Rubies with `Regexp.timeout` (a backstop for matches the hooks
//! do not see): a raw raise event hook keeps the
//! first `Regexp::TimeoutError` of the input and the pattern the hooked
//! match was running ([`running_match`](crate::feedback::running_match)); after the input, Ruby
//! (`Ruzzy::Detectors::ReDoS.timed_out`) turns them into the finding. On
//! every Ruby, the hooks number each match they run, and a watchdog Ruby
//! thread, asking [`running_match`] a few times a second for the running
//! match and the CPU time of the thread that runs the target, sees when
//! one match has used up the budget (it then raises into the matching
//! thread, which Ruby lets it do at the interrupt checks inside the
//! match). No clock is read per match.
//!
//! Regular-expression injection: the same raise hook keeps the first
//! `RegexpError` of the input (a pattern that failed to compile, whether
//! `Regexp.new` or an interpolated literal built it), which Ruby
//! (`Ruzzy::Detectors::RegexpInjection.failed`) turns into the finding.
//! SSRF: a connection C code tried, refused by
//! [`super::connect_guard`], is taken here too.
//!
//! Code injection: the same raise hook compares the name of a method or
//! constant a NameError (NoMethodError) says was not found with the canary
//! method's name, so that an input choosing the name that `send` or `eval`
//! looked up is steered to the canary.
//!
//! Invariants: the held values are GC-registered globals, written and read
//! only with the GVL; nothing here allocates unless a finding is made; a
//! Ruby exception never escapes (Ruby calls run under [`rb::protect`]).

use crate::feedback::running_match;
use crate::rb;
use crate::ruby_classes::RubyClass;
use magnus::rb_sys::{AsRawValue, FromRawValue};
use rb_sys::{rb_trace_arg_t, VALUE};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// The first finding a detector reported during this input (nil: none).
static PENDING: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// The first `Regexp::TimeoutError` raised during this input (nil: none).
static TIMEOUT_ERROR: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// The pattern whose match raised it (nil: not known).
static TIMEOUT_PATTERN: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// `Regexp::TimeoutError` once timeouts are watched (0: not watched).
static TIMEOUT_CLASS: AtomicUsize = AtomicUsize::new(0);

/// `RegexpError` once pattern errors are watched (0: not watched).
static PATTERN_ERROR_CLASS: AtomicUsize = AtomicUsize::new(0);
/// The first `RegexpError` raised during this input (nil: none).
static PATTERN_ERROR: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);

/// Whether missing names are compared with the canary.
static GUIDING_NAMES: AtomicBool = AtomicBool::new(false);
/// `ID` of NameError's hidden `name` attribute.
static ID_NAME: AtomicUsize = AtomicUsize::new(0);

/// The canary method's name (`Ruzzy::Detectors::CANARY`), a String.
static CANARY: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);

static REGISTER: Once = Once::new();

/// Registers the held values with the GC (once).
fn register_globals() {
    REGISTER.call_once(|| {
        for global in [
            &PENDING,
            &TIMEOUT_ERROR,
            &TIMEOUT_PATTERN,
            &CANARY,
            &PATTERN_ERROR,
        ] {
            rb::register_gc_root(global);
        }
    });
}

/// `Ruzzy::Native._detector_report(finding)`: holds `finding` (an exception) for
/// the callback, unless one is already held for this input.
pub fn report(finding: magnus::Value) {
    register_globals();
    let _ = PENDING.compare_exchange(
        rb::QNIL as usize,
        finding.as_raw() as usize,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
}

/// `Ruzzy::Native._watch_regexp_timeouts(klass)`: from now on the first `klass`
/// (Regexp::TimeoutError) raised during an input is a finding.
pub fn watch_regexp_timeouts(klass: magnus::RClass) {
    register_globals();
    // A class constant: never collected, so it needs no registration.
    TIMEOUT_CLASS.store(klass.as_raw() as usize, Ordering::Relaxed);
    watch_raises();
}

/// `Ruzzy::Native._watch_pattern_errors(klass)`: from now on the first
/// `klass` (RegexpError) raised during an input is a finding.
pub fn watch_pattern_errors(klass: magnus::RClass) {
    register_globals();
    PATTERN_ERROR_CLASS.store(klass.as_raw() as usize, Ordering::Relaxed);
    watch_raises();
}

/// Adds the raise hook (once).
fn watch_raises() {
    static HOOKED: Once = Once::new();
    HOOKED.call_once(|| rb::add_raw_event_hook(on_raise, rb_sys::RUBY_EVENT_RAISE));
}

/// `Ruzzy::Native._time_regexp_matches`: from now on hooked matches are counted,
/// for the watchdog.
pub fn time_regexp_matches() {
    register_globals();
    running_match::count_matches();
    // Only to clear the running match when it leaves by raising.
    watch_raises();
}

/// `Ruzzy::Native._running_match`: the pattern of the hooked match running now,
/// its number (the same number on a later call: the same match is still
/// running) and the CPU time, in seconds, the thread that runs the target
/// has used so far (nil when not known), or nil when no match runs.
pub fn running_match() -> Option<(magnus::Value, u64, Option<f64>)> {
    let (pattern, number) = running_match::current()?;
    // SAFETY: the running match's pattern is on the stack of the thread
    // that runs it (a match restores it when it returns, a raise or the
    // input's end clears it).
    let pattern = unsafe { magnus::Value::from_raw(pattern) };
    let cpu = crate::process::target_state::fuzzing_thread_cpu_ns().map(|ns| ns as f64 / 1e9);
    Some((pattern, number, cpu))
}

/// `Ruzzy::Native._guide_missing_names(canary)`: from now on a NameError's name
/// is compared with `canary`, the canary method's name.
pub fn guide_missing_names(canary: magnus::RString) {
    register_globals();
    CANARY.store(canary.as_raw() as usize, Ordering::Relaxed);
    ID_NAME.store(rb::intern(c"name") as usize, Ordering::Relaxed);
    GUIDING_NAMES.store(true, Ordering::Relaxed);
    watch_raises();
}

/// Compares the name a NameError carries with the canary.
fn guide_missing_name(error: VALUE) {
    // The name is a Symbol (or nil) kept by the error.
    if !rb::value::is_kind_of(error, rb::value::name_error_class()) {
        return;
    }
    let name = rb::value::attribute(error, ID_NAME.load(Ordering::Relaxed) as rb_sys::ID);
    // SAFETY: inside the raise event hook; no Ruby code runs below.
    let frame = unsafe { rb::value::Frame::enter() };
    let canary = frame.string_bytes(CANARY.load(Ordering::Relaxed) as VALUE);
    if let (Some(name), Some(canary)) = (frame.symbol_name(name), canary) {
        crate::feedback::compare_sites::bytes(
            crate::feedback::compare_sites::SiteId::UNKNOWN,
            name,
            canary,
        );
    }
}

unsafe extern "C" fn on_raise(_data: VALUE, trace: *mut rb_trace_arg_t) {
    let pattern = running_match::take();
    // SAFETY: a raise event's trace argument; reading the exception
    // allocates nothing and never raises.
    let error = unsafe { rb::trace_raised_exception(trace) };
    if GUIDING_NAMES.load(Ordering::Relaxed) {
        guide_missing_name(error);
    }
    hold_first(&PATTERN_ERROR_CLASS, &PATTERN_ERROR, error);
    let class = TIMEOUT_CLASS.load(Ordering::Relaxed) as VALUE;
    if class == 0 || TIMEOUT_ERROR.load(Ordering::Relaxed) as VALUE != rb::QNIL {
        return;
    }
    if !rb::value::is_kind_of(error, class) {
        return;
    }
    TIMEOUT_ERROR.store(error as usize, Ordering::Relaxed);
    TIMEOUT_PATTERN.store(pattern.unwrap_or(rb::QNIL) as usize, Ordering::Relaxed);
}

/// Holds `error` in `held` if it is the input's first of the class in
/// `class` (0: not watched).
fn hold_first(class: &AtomicUsize, held: &AtomicUsize, error: VALUE) {
    let class = class.load(Ordering::Relaxed) as VALUE;
    if class != 0
        && held.load(Ordering::Relaxed) as VALUE == rb::QNIL
        && rb::value::is_kind_of(error, class)
    {
        held.store(error as usize, Ordering::Relaxed);
    }
}

/// After each run of the target (the engine's lifecycle): takes what the
/// detectors found during the input that just ended: the finding to
/// report, or None. Clears everything held.
pub fn after_input() -> Option<VALUE> {
    running_match::clear();
    let pending = PENDING.swap(rb::QNIL as usize, Ordering::Relaxed) as VALUE;
    let timeout = TIMEOUT_ERROR.swap(rb::QNIL as usize, Ordering::Relaxed) as VALUE;
    let pattern = TIMEOUT_PATTERN.swap(rb::QNIL as usize, Ordering::Relaxed) as VALUE;
    let pattern_error = PATTERN_ERROR.swap(rb::QNIL as usize, Ordering::Relaxed) as VALUE;
    let refused = super::connect_guard::take();
    if pending != rb::QNIL {
        return Some(pending);
    }
    // The held values are alive: held in registered globals until now, and
    // on this stack. Should building a finding fail, the error itself is
    // reported.
    if timeout != rb::QNIL {
        let finding = rb::protect(|ruby| {
            ruby.call_class_method(RubyClass::ReDoS.path(), "timed_out", &[timeout, pattern])
        });
        return Some(finding.unwrap_or(timeout));
    }
    if pattern_error != rb::QNIL {
        let finding = rb::protect(|ruby| {
            ruby.call_class_method(
                RubyClass::RegexpInjection.path(),
                "failed",
                &[pattern_error],
            )
        });
        match finding {
            Ok(finding) if finding == rb::QNIL => {} // an encoding error
            Ok(finding) => return Some(finding),
            Err(_) => return Some(pattern_error),
        }
    }
    refused
}

//! Quiet coverage: the coverage events of a method or block that has found
//! nothing new for a while are switched off, between inputs, and switched
//! on again now and then to look once more.
//!
//! The event hook ([`crate::coverage::hook`]) tells this module when an
//! iseq reaches a counter for the first time in the process ([`note_new`]).
//! Between inputs ([`before_input`], from the engine's lifecycle) the policy
//! runs at most twice a second:
//! - an iseq whose last first-time counter is `quiet` ms old (10 s by
//!   default) is switched off, in a batch with every other such iseq
//!   ([`crate::rb::iseq_trace`]: its events minus the coverage events,
//!   then a targeted TracePoint enabled and disabled on it), all but the
//!   instructions whose event never fired: an arm that never ran costs
//!   nothing while it does not run, and when an input reaches it, it is
//!   seen as in an iseq switched on (the hook records each instruction
//!   that fires a first-time counter, [`note_new`]);
//! - after the first batch, every switched-off iseq is switched on again for
//!   a window (a tenth of the interval, at least 2 s), at intervals that
//!   double from 30 s to 8 minutes, so that inputs found meanwhile can still
//!   reach new edges and hit counts there; an iseq that finds something new
//!   in a window stays on until it is quiet again.
//!
//! Switching off pays where the events take a share of the time: the hook
//! counts them, and where they take [`MIN_EVENT_SHARE_PER_MILLE`] or more of
//! the time the thread ran (the time it waited for a core left out) at
//! what one costs ([`calibrate`]), the quiet iseqs are switched off.
//! Below that share the events alone say too little (libFuzzer's work for
//! each counter an input sets is not in it: on a parser, switching saves
//! several times the share), so switching off is a trial, measured: the
//! time an input takes (the clock less the time the thread waited for a
//! core, [`crate::process::run_delay`]) over half a second with every event
//! on, then with the quiet iseqs off, on, off, on, off and on again. The
//! middle of the three measures off against the middle of the four on (a
//! garbage collection that falls in one measure moves neither) decides:
//! they stay off when an input took [`MIN_SAVING_PER_MILLE`] less time
//! with them off; else they stay on and the next trial waits, 30 s and
//! doubling up to 8 minutes. Each later batch is judged the same way: by
//! the share, or by a trial of its own.
//!
//! Something else may switch coverage back on behind ruzzy's back: enabling
//! a global TracePoint for an iseq event Ruby has not traced before (the
//! campaign's hang trace, a TracePoint in the target) recompiles every iseq
//! with every event enabled so far. The cache marks switched-off iseqs
//! ([`crate::coverage::iseq_cache`]), so an event from one is noticed
//! ([`event_while_off`]): when the iseq's events hold the coverage events
//! again, it counts as on (and is counted as switched on elsewhere); when
//! they do not, the event came with another event enabled on the same
//! instruction and the iseq stays off. Either way the event is counted.
//!
//! Invariants: the table is allocated once, when coverage starts
//! ([`prepare`]); the policy runs once it is configured ([`configure`]); the hook's part ([`note_new`], [`event_while_off`],
//! [`switched_off`]) allocates nothing and takes no lock (atomics; the GVL
//! holder is the only writer); switching happens only in [`before_input`]
//! (or the tests' probe), never inside an event hook.

use crate::coverage::locator;
use crate::process::{run_delay, run_stats, target_state};
use crate::rb::{self, interpreter_layout, iseq_trace};
use rb_sys::{rb_trace_arg_t, VALUE};
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed,
};
use std::sync::OnceLock;
use std::time::Instant;

/// Iseqs the policy can follow; more are never switched off.
const CAPACITY: usize = 1 << 15;
/// Slots probed for an iseq before giving up.
const PROBES: usize = 32;
/// How often (ms) the policy looks at the table.
const CHECK_MS: u64 = 500;
/// The first interval between two windows, and the longest (ms).
const FIRST_INTERVAL_MS: u64 = 30_000;
const MAX_INTERVAL_MS: u64 = 480_000;
/// The shortest window (ms).
const MIN_WINDOW_MS: u64 = 2_000;
/// About what one branch event costs the interpreter and the hook on the
/// machine where [`REFERENCE_PS_PER_ROUND`] was measured (ns; README's
/// coverage table: 13 to 32 ns an event there). Scaled, when the policy
/// is configured, by how fast the machine running it is ([`calibrate`]):
/// a slower machine, an emulator or valgrind slows the events and the
/// rest of the work alike, and the share must not change with it.
const EVENT_NS: u64 = 20;
/// Rounds of [`calibration_work`] timed, and what one round took on the
/// machine of [`EVENT_NS`] (ps, the fastest of eight processes).
const CALIBRATION_ROUNDS: u64 = 40_000;
const REFERENCE_PS_PER_ROUND: u64 = 1_670;
/// Methods are switched off only while the branch events take at least
/// this share (per mille) of the time: below it, switching saves next to
/// nothing and costs what a switched-off method can no longer tell (a web
/// app whose few instrumented methods run a few events a request, inside
/// milliseconds of framework code).
const MIN_EVENT_SHARE_PER_MILLE: u64 = 30;
/// A trial keeps the quiet iseqs off only when an input took at least this
/// share (per mille) less time with them off than with them on.
const MIN_SAVING_PER_MILLE: i64 = 100;
/// Each of a trial's measures lasts this long (ms) and this many inputs
/// at least; [`TRIAL_MEASURES`] of them, on and off in turn, on first and
/// last.
const TRIAL_WINDOW_MS: u64 = 500;
const TRIAL_MEASURES: usize = 7;
const TRIAL_MIN_INPUTS: u64 = 20;
/// Instructions whose coverage event has fired that the policy can
/// follow; one more stays traced when it is switched off.
const SITES: usize = 1 << 17;

/// An iseq's state.
const ON: u8 = 0;
const OFF: u8 = 1;
/// Could not be switched off: never tried again.
const STUCK: u8 = 2;
/// Asked for in the running batch.
const PENDING: u8 = 3;
/// Not found in the heap: its body was freed.
const GONE: u8 = 4;

struct Entry {
    body: AtomicUsize,
    encoded: AtomicUsize,
    last_new: AtomicU64,
    state: AtomicU8,
}

/// What the policy did, for `Ruzzy::Native._coverage_info` and the tests.
#[derive(Default)]
struct Counts {
    switched_off: AtomicU64,
    switched_on: AtomicU64,
    windows: AtomicU64,
    on_elsewhere: AtomicU64,
    failed: AtomicU64,
    batches: AtomicU64,
    arms_kept: AtomicU64,
    trials: AtomicU64,
}

/// The start of a measure: the policy's clock (ms), the time the thread
/// had run ([`ran_ns`]), and the inputs run so far.
#[derive(Clone, Copy)]
struct Mark {
    ms: u64,
    ran_ns: u64,
    inputs: u64,
}

impl Mark {
    fn now(ms: u64) -> Mark {
        Mark {
            ms,
            ran_ns: ran_ns(),
            inputs: run_stats::executions(),
        }
    }

    fn load(from: &[AtomicU64; 3]) -> Mark {
        let [ms, ran_ns, inputs] = from.each_ref().map(|field| field.load(Relaxed));
        Mark { ms, ran_ns, inputs }
    }

    fn store(self, to: &[AtomicU64; 3]) {
        for (field, value) in to.iter().zip([self.ms, self.ran_ns, self.inputs]) {
            field.store(value, Relaxed);
        }
    }

    /// From `self` to `now`: whether it is long enough to tell, and the
    /// ns an input took that the thread did not spend waiting for a core.
    fn cost_until(self, now: Mark) -> (bool, u64) {
        let inputs = now.inputs.saturating_sub(self.inputs);
        let long_enough =
            now.ms.saturating_sub(self.ms) >= TRIAL_WINDOW_MS && inputs >= TRIAL_MIN_INPUTS;
        let ran = now.ran_ns.saturating_sub(self.ran_ns);
        (long_enough, ran / inputs.max(1))
    }
}

/// What a trial measured switching off to save (per mille, below zero
/// when it cost): the middle of its measures off against the middle of
/// those on (a garbage collection that falls in one measure moves
/// neither).
fn trial_saving_per_mille(measures: &[u64; TRIAL_MEASURES]) -> i64 {
    let mut on = [0_u64; TRIAL_MEASURES / 2 + 1];
    let mut off = [0_u64; TRIAL_MEASURES / 2];
    for (i, &measure) in measures.iter().enumerate() {
        if i % 2 == 0 {
            on[i / 2] = measure;
        } else {
            off[i / 2] = measure;
        }
    }
    saving_per_mille(middle(&mut on), middle(&mut off))
}

/// The median of `values` (the mean of the two middle ones of an even
/// count).
fn middle(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    let half = values.len() / 2;
    if values.len() % 2 == 1 {
        values[half]
    } else {
        ((u128::from(values[half - 1]) + u128::from(values[half])) / 2) as u64
    }
}

/// What switching off saved (per mille, below zero when it cost): an
/// input's time `off` against `on`.
fn saving_per_mille(on: u64, off: u64) -> i64 {
    if on == 0 {
        return 0;
    }
    ((i128::from(on) - i128::from(off)) * 1000 / i128::from(on)) as i64
}

struct Quiet {
    entries: Box<[Entry]>,
    /// The instructions whose event has fired ([`site_key`]; 0: free).
    sites: Box<[AtomicU64]>,
    /// The policy's quiet time; 0 until it is configured (off).
    quiet_ms: AtomicU64,
    next_check: AtomicU64,
    /// When the next window opens (0: nothing was switched off yet).
    next_window: AtomicU64,
    interval: AtomicU64,
    counts: Counts,
    /// The trial: the measures it has taken (0: none runs) and what they
    /// read (ns an input; odd ones with the quiet iseqs off), when the next
    /// may start (ms) and the wait after that one; the saving the last
    /// trial measured (per mille; i64::MIN: none yet); where the running
    /// measure started ([`Mark`]).
    trial_taken: AtomicUsize,
    trial_measures: [AtomicU64; TRIAL_MEASURES],
    next_trial: AtomicU64,
    trial_interval: AtomicU64,
    saving: AtomicI64,
    mark: [AtomicU64; 3],
}

static QUIET: OnceLock<Quiet> = OnceLock::new();
/// The `rebuild` callable (`Ruzzy::Coverage`), a GC root.
static REBUILD: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);
/// The policy's clock (ms since it was configured), as of the last input.
static NOW_MS: AtomicU64 = AtomicU64::new(0);
/// Added to the clock by the tests' probe.
static SKEW_MS: AtomicU64 = AtomicU64::new(0);
static EPOCH: OnceLock<Instant> = OnceLock::new();
/// Branch events since the policy last looked (written by the GVL holder).
static EVENTS: AtomicU64 = AtomicU64::new(0);
/// When the policy last looked (ms, the policy's clock), and the time the
/// thread had run by then ([`ran_ns`]).
static LAST_LOOK_MS: AtomicU64 = AtomicU64::new(0);
static LAST_RAN_NS: AtomicU64 = AtomicU64::new(0);
/// The branch events' share of the time when it last looked (per mille).
static EVENT_SHARE: AtomicU64 = AtomicU64::new(0);
/// The tests' probe runs the policy whatever the events' share.
static PROBING: AtomicBool = AtomicBool::new(false);
/// What one branch event costs on this machine (ps), as [`calibrate`]d.
static EVENT_PS: AtomicU64 = AtomicU64::new(EVENT_NS * 1000);
/// The tests' probe: what a trial's measures read (ns an input; 0: the
/// probe runs no trial, it switches whatever the share).
static PROBE_COST_NS: AtomicU64 = AtomicU64::new(0);

/// The hook: one branch event fired (no atomic read-modify-write: only
/// the GVL holder runs hooks).
#[inline(always)]
pub fn count_event() {
    EVENTS.store(EVENTS.load(Relaxed).wrapping_add(1), Relaxed);
}

fn clock_ms() -> u64 {
    let epoch = EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_millis() as u64 + SKEW_MS.load(Relaxed)
}

/// When coverage starts: the table that follows which iseqs find new
/// counters, before the policy is on (the harness's own first inputs, the
/// code run while it loads, count too).
pub fn prepare() {
    let _ = QUIET.get_or_init(|| {
        let now = clock_ms();
        NOW_MS.store(now, Relaxed);
        Quiet {
            entries: (0..CAPACITY)
                .map(|_| Entry {
                    body: AtomicUsize::new(0),
                    encoded: AtomicUsize::new(0),
                    last_new: AtomicU64::new(0),
                    state: AtomicU8::new(ON),
                })
                .collect(),
            sites: (0..SITES).map(|_| AtomicU64::new(0)).collect(),
            quiet_ms: AtomicU64::new(0),
            next_check: AtomicU64::new(0),
            next_window: AtomicU64::new(0),
            interval: AtomicU64::new(FIRST_INTERVAL_MS),
            counts: Counts::default(),
            trial_taken: AtomicUsize::new(0),
            trial_measures: Default::default(),
            next_trial: AtomicU64::new(0),
            trial_interval: AtomicU64::new(FIRST_INTERVAL_MS),
            saving: AtomicI64::new(i64::MIN),
            mark: Default::default(),
        }
    });
}

/// `Ruzzy::Native._jit_calls(iseq)`: on Ruby 3.1, the calls YJIT counted
/// towards compiling the iseq a `RubyVM::InstructionSequence` wraps, which
/// the caller checks before asking [`configure`] to reset them; nil on
/// other Rubies.
pub fn jit_calls(ruby: &magnus::Ruby, iseq: magnus::Value) -> Result<Option<u64>, magnus::Error> {
    let iseq = rb::instruction_sequence(ruby, iseq)?;
    // SAFETY: checked to be a live RubyVM::InstructionSequence.
    Ok(unsafe { interpreter_layout::jit_calls(iseq) })
}

/// `Ruzzy::Native._quiet_coverage(seconds, rebuild, jit, jit_again)`:
/// switches iseqs quiet for `seconds` off from now on; `rebuild` (see
/// [`iseq_trace::switch`]) rebuilds one iseq's instructions; `jit`: YJIT is
/// on, `jit_again`: and the iseqs it threw away get their call counts reset
/// (Ruby 3.1, see [`iseq_trace::set_jit`]). Returns nil when on, else why
/// not.
pub fn configure(
    seconds: f64,
    rebuild: magnus::Value,
    jit: bool,
    jit_again: bool,
) -> Option<String> {
    use magnus::rb_sys::AsRawValue;
    let Some(quiet) = QUIET.get() else {
        return Some("coverage is not running".to_owned());
    };
    if !crate::coverage::location::precise() {
        return Some("coverage locations come from the public API".to_owned());
    }
    if let Some(why) = iseq_trace::unavailable() {
        return Some(why.to_owned());
    }
    if !(seconds.is_finite() && seconds > 0.0) {
        return Some("off".to_owned());
    }
    if quiet.quiet_ms.load(Relaxed) == 0 {
        REBUILD.store(rebuild.as_raw() as usize, Relaxed);
        rb::register_gc_root(&REBUILD);
    }
    iseq_trace::set_jit(jit, jit_again);
    let now = clock_ms();
    NOW_MS.store(now, Relaxed);
    // What the harness reached while it loaded was not found by fuzzing:
    // the quiet time counts from now.
    for entry in quiet.entries.iter() {
        entry.last_new.fetch_max(now, Relaxed);
    }
    quiet.next_check.store(now + CHECK_MS, Relaxed);
    EVENT_PS.store(calibrate(), Relaxed);
    LAST_LOOK_MS.store(now, Relaxed);
    LAST_RAN_NS.store(ran_ns(), Relaxed);
    EVENTS.store(0, Relaxed);
    Mark::now(now).store(&quiet.mark);
    quiet
        .quiet_ms
        .store(((seconds * 1000.0) as u64).max(1), Relaxed);
    None
}

/// A fixed piece of work shaped as an interpreter's is (a call through a
/// table at every step, the next one chosen by the last result), whose
/// time says how fast this machine, or the emulator or valgrind running
/// it, runs the interpreter: a plain arithmetic loop slows 16 times under
/// valgrind where Ruby slows 50 times, this one 77 times.
#[inline(never)]
fn calibration_work(rounds: u64) -> u64 {
    #[inline(never)]
    fn rotate(x: u64) -> u64 {
        x.rotate_left(5) ^ 0x55
    }
    #[inline(never)]
    fn multiply(x: u64) -> u64 {
        x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    #[inline(never)]
    fn fold(x: u64) -> u64 {
        x ^ (x >> 11)
    }
    #[inline(never)]
    fn add(x: u64) -> u64 {
        x.wrapping_add(0x1234_5678)
    }
    let steps: [fn(u64) -> u64; 4] = std::hint::black_box([rotate, multiply, fold, add]);
    let mut x = 1_u64;
    for _ in 0..rounds {
        x = steps[(x >> 62) as usize](x);
    }
    x
}

/// What one branch event costs here (ps): [`EVENT_NS`] scaled by how long
/// [`calibration_work`] takes (the fastest of three runs, about 54 µs each
/// on the reference machine) against [`REFERENCE_PS_PER_ROUND`], within a
/// quarter and a thousand times it.
fn calibrate() -> u64 {
    let fastest = (0..3)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(calibration_work(CALIBRATION_ROUNDS));
            started.elapsed().as_nanos() as u64
        })
        .min()
        .unwrap_or(0);
    scaled_event_ps(fastest * 1000 / CALIBRATION_ROUNDS)
}

/// [`EVENT_NS`] in ps, scaled to a machine where a calibration round takes
/// `ps_per_round`.
fn scaled_event_ps(ps_per_round: u64) -> u64 {
    let nominal = EVENT_NS * 1000;
    (nominal * ps_per_round / REFERENCE_PS_PER_ROUND).clamp(nominal / 4, nominal * 1000)
}

/// The clock less the time the thread waited for a core so far (ns).
fn ran_ns() -> u64 {
    target_state::now_ns().saturating_sub(run_delay::run_delay_ns().unwrap_or(0))
}

/// The branch events' share of `elapsed_ms` (per mille), at `event_ps` each.
fn share_per_mille(events: u64, event_ps: u64, elapsed_ms: u64) -> u64 {
    events.saturating_mul(event_ps) / elapsed_ms.max(1) / 1_000_000
}

/// The key of the instruction at `pos` of the iseq (body, instruction
/// buffer) in [`Quiet::sites`]: never 0.
fn site_key(body: usize, encoded: usize, pos: usize) -> u64 {
    let mut key = (body as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (encoded as u64).rotate_left(29)
        ^ (pos as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    key ^= key >> 31;
    key | 1
}

impl Quiet {
    /// The slots `key` may sit in, in probing order.
    fn site_slots(&self, key: u64) -> impl Iterator<Item = &AtomicU64> {
        let start = (key >> 17) as usize;
        (0..PROBES).map(move |i| &self.sites[(start + i) & (SITES - 1)])
    }

    fn note_site(&self, key: u64) {
        for slot in self.site_slots(key) {
            match slot.load(Relaxed) {
                0 => return slot.store(key, Relaxed),
                found if found == key => return,
                _ => {}
            }
        }
    }

    fn site_fired(&self, key: u64) -> bool {
        self.site_slots(key)
            .map(|slot| slot.load(Relaxed))
            .take_while(|&found| found != 0)
            .any(|found| found == key)
    }

    fn find(&self, body: usize) -> Option<&Entry> {
        let start = (body >> 4) ^ (body >> 20);
        (0..PROBES)
            .map(|i| &self.entries[(start + i) & (CAPACITY - 1)])
            .take_while(|entry| entry.body.load(Relaxed) != 0)
            .find(|entry| entry.body.load(Relaxed) == body)
    }

    fn find_or_add(&self, body: usize) -> Option<&Entry> {
        let start = (body >> 4) ^ (body >> 20);
        for i in 0..PROBES {
            let entry = &self.entries[(start + i) & (CAPACITY - 1)];
            match entry.body.load(Relaxed) {
                0 => {
                    entry.state.store(ON, Relaxed);
                    entry.body.store(body, Relaxed);
                    return Some(entry);
                }
                found if found == body => return Some(entry),
                _ => {}
            }
        }
        None
    }
}

/// The hook: iseq `key` (body, instruction buffer) reached a counter for
/// the first time in the process, at pc `offset` (the event's: one word
/// past its instruction, as Ruby's own coverage reads it).
#[cold]
pub fn note_new(key: (usize, usize), offset: u64) {
    let Some(quiet) = QUIET.get() else { return };
    if let Some(pos) = (offset as usize).checked_sub(1) {
        quiet.note_site(site_key(key.0, key.1, pos));
    }
    if let Some(entry) = quiet.find_or_add(key.0) {
        entry.encoded.store(key.1, Relaxed);
        entry.last_new.store(NOW_MS.load(Relaxed), Relaxed);
        match entry.state.load(Relaxed) {
            GONE => entry.state.store(ON, Relaxed),
            // An instruction kept traced fired: the iseq is switched off
            // again, that one too, once it is quiet.
            OFF => {
                entry.state.store(ON, Relaxed);
                if let Some(locator) = locator::get() {
                    locator.mark(key, false);
                }
            }
            _ => {}
        }
    }
}

/// Whether the iseq whose body is at `body` is switched off (for the
/// locator's cache, when it resolves an iseq).
#[cold]
pub fn switched_off(body: usize) -> bool {
    QUIET
        .get()
        .and_then(|quiet| quiet.find(body))
        .is_some_and(|entry| entry.state.load(Relaxed) == OFF)
}

/// The hook: a coverage event fired in iseq `key`, which the cache says is
/// switched off.
///
/// # Safety
/// Inside the event hook that `arg` was given to.
#[cold]
pub unsafe fn event_while_off(key: (usize, usize), arg: *mut rb_trace_arg_t) {
    // SAFETY: by the caller's contract, a coverage event's live trace argument.
    let events = unsafe { interpreter_layout::event_trace_events(arg) };
    if events.is_some_and(|events| events & iseq_trace::COVERAGE_EVENTS == 0) {
        return; // fired with another event on the same instruction
    }
    let Some(quiet) = QUIET.get() else { return };
    if let Some(entry) = quiet.find(key.0) {
        if entry.state.load(Relaxed) == OFF {
            entry.state.store(ON, Relaxed);
            entry.last_new.store(NOW_MS.load(Relaxed), Relaxed);
            quiet.counts.on_elsewhere.fetch_add(1, Relaxed);
        }
    }
    if let Some(locator) = locator::get() {
        locator.mark(key, false);
    }
}

/// Between inputs (the engine's lifecycle, before the target runs): the
/// clock, and the policy twice a second.
#[inline(always)]
pub fn before_input() {
    if let Some(quiet) = QUIET
        .get()
        .filter(|quiet| quiet.quiet_ms.load(Relaxed) != 0)
    {
        let now = clock_ms();
        NOW_MS.store(now, Relaxed);
        if now >= quiet.next_check.load(Relaxed) {
            quiet.run(now);
        }
    }
}

/// The tests' probe (`Ruzzy::Native._quiet_coverage_probe_cost(ns)`): from
/// now on a trial's every measure says an input took `ns` (0: the probe
/// runs no trial, it switches whatever the share).
pub fn probe_cost(ns: u64) {
    PROBE_COST_NS.store(ns, Relaxed);
}

/// The tests' probe (`Ruzzy::Native._quiet_coverage_tick(ms)`): moves the
/// policy's clock `ms` on and runs the policy as between two inputs.
pub fn tick(ms: u64) {
    SKEW_MS.fetch_add(ms, Relaxed);
    PROBING.store(true, Relaxed);
    if let Some(quiet) = QUIET.get() {
        quiet.next_check.store(0, Relaxed);
    }
    before_input();
}

impl Quiet {
    #[cold]
    #[inline(never)]
    fn run(&self, now: u64) {
        self.next_check.store(now + CHECK_MS, Relaxed);
        let events = EVENTS.swap(0, Relaxed);
        let looked = LAST_LOOK_MS.swap(now, Relaxed);
        let ran_now = ran_ns();
        let ran = ran_now.saturating_sub(LAST_RAN_NS.swap(ran_now, Relaxed)) / 1_000_000;
        // The time the thread ran, which a busy machine does not shorten
        // (the probe's: the clock it moves on).
        let elapsed = if PROBING.load(Relaxed) {
            now.saturating_sub(looked)
        } else {
            ran
        };
        let share = share_per_mille(events, EVENT_PS.load(Relaxed), elapsed);
        EVENT_SHARE.store(share, Relaxed);
        if self.trial_taken.load(Relaxed) != 0 {
            return self.go_on_with_trial(now);
        }
        let next_window = self.next_window.load(Relaxed);
        if next_window != 0 && now >= next_window {
            self.open_window(now);
            return self.restart_measure(now);
        }
        let any_quiet = self.mark_quiet(now, false);
        let probing = PROBING.load(Relaxed) && PROBE_COST_NS.load(Relaxed) == 0;
        if any_quiet && (share >= MIN_EVENT_SHARE_PER_MILLE || probing) {
            return self.switch_quiet_off(now);
        }
        let measured = self.measure(now);
        if let Some(cost) = measured.filter(|_| any_quiet && now >= self.next_trial.load(Relaxed)) {
            self.trial_measures[0].store(cost, Relaxed);
            self.trial_taken.store(1, Relaxed);
            self.counts.trials.fetch_add(1, Relaxed);
            self.mark_quiet(now, true);
            self.switch(true);
        }
        if measured.is_some() {
            // A trial's first measure is the latest half second or so.
            self.restart_measure(now);
        }
    }

    /// Whether an iseq is quiet; with `pending`, every quiet iseq is asked
    /// for in the next batch.
    fn mark_quiet(&self, now: u64, pending: bool) -> bool {
        let quiet_ms = self.quiet_ms.load(Relaxed);
        let mut any = false;
        for entry in self.entries.iter() {
            if entry.state.load(Relaxed) == ON
                && now.saturating_sub(entry.last_new.load(Relaxed)) >= quiet_ms
            {
                any = true;
                if !pending {
                    break;
                }
                entry.state.store(PENDING, Relaxed);
            }
        }
        any
    }

    /// Every switched-off iseq is asked for in the next batch.
    fn mark_off_pending(&self) {
        for entry in self.entries.iter() {
            if entry.state.load(Relaxed) == OFF {
                entry.state.store(PENDING, Relaxed);
            }
        }
    }

    /// Every quiet iseq off, in one batch.
    fn switch_quiet_off(&self, now: u64) {
        self.mark_quiet(now, true);
        self.switch(true);
        if self.next_window.load(Relaxed) == 0 {
            self.next_window.store(now + FIRST_INTERVAL_MS, Relaxed);
        }
        self.restart_measure(now);
    }

    /// The time an input took since the running measure started, once it
    /// has lasted long enough to tell (the tests' probe: what it says).
    fn measure(&self, now: u64) -> Option<u64> {
        let probe = PROBE_COST_NS.load(Relaxed);
        if PROBING.load(Relaxed) && probe != 0 {
            return Some(probe);
        }
        let (long_enough, cost) = Mark::load(&self.mark).cost_until(Mark::now(now));
        long_enough.then_some(cost)
    }

    fn restart_measure(&self, now: u64) {
        Mark::now(now).store(&self.mark);
    }

    /// A trial's next step, once its running measure is long enough: the
    /// quiet iseqs on again after a measure with them off, off again after
    /// one with them on; after the last, off for good when that paid, else
    /// the next trial waits.
    fn go_on_with_trial(&self, now: u64) {
        let Some(cost) = self.measure(now) else {
            return;
        };
        let taken = self.trial_taken.load(Relaxed);
        self.trial_measures[taken].store(cost, Relaxed);
        if taken + 1 < TRIAL_MEASURES {
            let off = taken % 2 == 0;
            if off {
                self.mark_quiet(now, true);
            } else {
                self.mark_off_pending();
            }
            self.switch(off);
            self.trial_taken.store(taken + 1, Relaxed);
            return self.restart_measure(now);
        }
        self.trial_taken.store(0, Relaxed);
        let measures = self
            .trial_measures
            .each_ref()
            .map(|measure| measure.load(Relaxed));
        let saving = trial_saving_per_mille(&measures);
        self.saving.store(saving, Relaxed);
        if saving >= MIN_SAVING_PER_MILLE {
            return self.switch_quiet_off(now);
        }
        let interval = self.trial_interval.load(Relaxed);
        self.next_trial.store(now + interval, Relaxed);
        self.trial_interval
            .store((interval * 2).min(MAX_INTERVAL_MS), Relaxed);
        self.restart_measure(now);
    }

    /// Every switched-off iseq on again, for a window after which it is
    /// quiet again unless it found something new.
    fn open_window(&self, now: u64) {
        let interval = self.interval.load(Relaxed);
        let window = (interval / 10).max(MIN_WINDOW_MS);
        self.mark_off_pending();
        self.switch(false);
        let quiet_again = (now + window).saturating_sub(self.quiet_ms.load(Relaxed));
        for entry in self.entries.iter() {
            if entry.state.load(Relaxed) == ON && entry.last_new.load(Relaxed) < quiet_again {
                entry.last_new.store(quiet_again, Relaxed);
            }
        }
        self.next_window.store(now + window + interval, Relaxed);
        self.interval
            .store((interval * 2).min(MAX_INTERVAL_MS), Relaxed);
        self.counts.windows.fetch_add(1, Relaxed);
    }

    /// Switches every PENDING iseq off (`off`) or on; those not found in
    /// the heap are GONE.
    fn switch(&self, off: bool) {
        let rebuild = REBUILD.load(Relaxed) as VALUE;
        self.counts.batches.fetch_add(1, Relaxed);
        let kept = iseq_trace::switch(
            rebuild,
            |body| {
                self.find(body)
                    .filter(|entry| entry.state.load(Relaxed) == PENDING)
                    .map(|_| off)
            },
            |body, encoded, pos| !self.site_fired(site_key(body, encoded, pos)),
            |body, encoded, off, outcome| {
                let Some(entry) = self.find(body) else { return };
                let state = match (outcome, off) {
                    (iseq_trace::Switched::Failed, _) => {
                        self.counts.failed.fetch_add(1, Relaxed);
                        STUCK
                    }
                    (switched, true) => {
                        if switched == iseq_trace::Switched::Done {
                            self.counts.switched_off.fetch_add(1, Relaxed);
                        }
                        OFF
                    }
                    (switched, false) => {
                        if switched == iseq_trace::Switched::Done {
                            self.counts.switched_on.fetch_add(1, Relaxed);
                        }
                        ON
                    }
                };
                entry.state.store(state, Relaxed);
                if let Some(locator) = locator::get() {
                    locator.mark((body, encoded), state == OFF);
                }
            },
        );
        if let Some(kept) = kept {
            self.counts.arms_kept.store(kept as u64, Relaxed);
        }
        for entry in self.entries.iter() {
            if entry.state.load(Relaxed) == PENDING {
                entry.state.store(GONE, Relaxed);
            }
        }
    }
}

/// Facts for `Ruzzy::Native._coverage_info`: (quiet seconds, iseqs off now,
/// switched off, switched on, windows, switched on elsewhere, failed,
/// batches, instructions kept traced in switched-off iseqs as of the last
/// batch, the branch events' share of the time when the policy last
/// looked, in percent, what an event costs here, in ns, as calibrated,
/// trials, and what the last trial measured switching off to save, in
/// percent, NaN before the first); None when quiet coverage is not on.
pub fn info() -> Option<[f64; 13]> {
    let quiet = QUIET
        .get()
        .filter(|quiet| quiet.quiet_ms.load(Relaxed) != 0)?;
    let off = quiet
        .entries
        .iter()
        .filter(|entry| entry.state.load(Relaxed) == OFF)
        .count();
    let counts = &quiet.counts;
    Some([
        quiet.quiet_ms.load(Relaxed) as f64 / 1000.0,
        off as f64,
        counts.switched_off.load(Relaxed) as f64,
        counts.switched_on.load(Relaxed) as f64,
        counts.windows.load(Relaxed) as f64,
        counts.on_elsewhere.load(Relaxed) as f64,
        counts.failed.load(Relaxed) as f64,
        counts.batches.load(Relaxed) as f64,
        counts.arms_kept.load(Relaxed) as f64,
        EVENT_SHARE.load(Relaxed) as f64 / 10.0,
        EVENT_PS.load(Relaxed) as f64 / 1000.0,
        counts.trials.load(Relaxed) as f64,
        match quiet.saving.load(Relaxed) {
            i64::MIN => f64::NAN,
            saving => saving as f64 / 10.0,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_the_same_on_a_machine_ten_times_slower() {
        // 1.5 million events of 20 ns in one second: 3%, the threshold.
        let here = share_per_mille(1_500_000, scaled_event_ps(REFERENCE_PS_PER_ROUND), 1_000);
        assert_eq!(here, MIN_EVENT_SHARE_PER_MILLE);
        // Ten times slower (valgrind, an emulator): a tenth of the events
        // in the same second, each ten times dearer.
        let slow = share_per_mille(150_000, scaled_event_ps(REFERENCE_PS_PER_ROUND * 10), 1_000);
        assert_eq!(slow, here);
    }

    #[test]
    fn a_trial_sets_the_middle_measure_off_against_the_middle_one_on() {
        assert_eq!(saving_per_mille(1_000, 800), 200);
        assert_eq!(saving_per_mille(1_000, 1_050), -50);
        assert_eq!(saving_per_mille(0, 5), 0);
        assert_eq!(saving_per_mille(u64::MAX, 0), 1000);
        // A collection made the second measure on slow: it moves nothing.
        let measures = [1_000, 950, 2_900, 960, 1_000, 940, 1_000];
        assert_eq!(trial_saving_per_mille(&measures), 50);
        assert!(trial_saving_per_mille(&measures) < MIN_SAVING_PER_MILLE);
        // And one made a measure off slow.
        let measures = [1_000, 800, 1_000, 2_000, 1_100, 790, 1_000];
        assert_eq!(trial_saving_per_mille(&measures), 200);
    }

    #[test]
    fn a_measure_counts_the_time_the_thread_did_not_wait_for_a_core() {
        // The clock (ns, 1 µs at the policy's 0 ms) less the time the
        // thread had waited.
        let at = |ms: u64, waited_ns: u64, inputs: u64| Mark {
            ms,
            ran_ns: ms * 1_000_000 + 1_000 - waited_ns,
            inputs,
        };
        let from = at(0, 100, 10);
        let until = at;
        // 1 s, half of it waiting, 500 inputs: 1 ms each.
        assert_eq!(
            from.cost_until(until(1_000, 500_000_100, 510)),
            (true, 1_000_000)
        );
        assert!(
            !from.cost_until(until(TRIAL_WINDOW_MS - 1, 100, 510)).0,
            "too short"
        );
        assert!(
            !from
                .cost_until(until(5_000, 100, 10 + TRIAL_MIN_INPUTS - 1))
                .0,
            "too few inputs"
        );
        assert_eq!(
            from.cost_until(until(1_000, 100, 10)).1,
            1_000_000_000,
            "no input"
        );
    }

    #[test]
    fn the_calibration_stays_within_its_bounds() {
        assert_eq!(scaled_event_ps(0), EVENT_NS * 1000 / 4);
        assert_eq!(
            scaled_event_ps(u64::MAX / 1_000_000),
            EVENT_NS * 1000 * 1000
        );
        let here = calibrate();
        assert!(
            (EVENT_NS * 250..=EVENT_NS * 1_000_000).contains(&here),
            "{here}"
        );
        assert_eq!(share_per_mille(u64::MAX, u64::MAX, 0), u64::MAX / 1_000_000);
    }
}

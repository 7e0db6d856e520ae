//! The life of one input, in one place: what each participant does before
//! the target runs an input and after it returns, in order (as LibAFL's
//! observers have `pre_exec` and `post_exec`). Every participant names its
//! part `before_input` or `after_input`; [`crate::engine::callback`] calls
//! only this module around the target, so a new participant is one line
//! here, in its place in the order.
//!
//! Before an input the engine hands over ([`before_input`]), once per input:
//! 1. [`signals`]: on the first input, adopts the handlers libFuzzer installed;
//! 2. [`run_limits`]: counts the input, and ends the run at `-runs` or
//!    `-max_total_time` for an engine that does not (LibAFL);
//! 3. [`blind_map`]: hits the blind map's one counter, when it is in use;
//! 4. [`stack_depth`]: remembers where a preloaded libFuzzer set the lowest
//!    stack (a rejected input's depth is put back there);
//! 5. [`quiet`]: twice a second, switches the coverage of quiet methods and
//!    blocks off, or all of it on again for a window (runs Ruby code then:
//!    between inputs, never inside a hook);
//! 6. [`reported_pairs`]: every few inputs, forgets which comparisons it
//!    reported, so that they are reported once more;
//!
//! then before every run of the target on it (a slow input runs twice:
//! [`before_rerun`] starts the second run with these only):
//! 7. [`hook`]: forgets the previous location and counts the call itself;
//! 8. [`numbers`]: forgets the previous run's conversions;
//! 9. [`target_state`]: the input and its start, for signal handlers and
//!    the hang watch (last, so its clock times the target alone).
//!
//! After every run of the target ([`after_input`]), filling [`InputOutcome`]:
//! 1. [`target_state`]: the target left; how long it ran (first, so its
//!    clock stops as the target returns);
//! 2. [`sanitizer_stack`]: unpoisons the dead stack below, down past the
//!    deepest point the run reached ([`stack_depth`]), before any other
//!    code uses it (a `break` out of sanitizer-instrumented C frames leaves
//!    their redzones poisoned there);
//! 3. [`held_findings`]: takes the finding a bug detector held (a ReDoS,
//!    a pattern error, a refused connection), and clears what they hold.
//!
//! What the outcome then means (a held finding first, then an exception or
//! the return value; a slow input) is the callback's verdict.
//!
//! Invariants: a plain sequence of calls, inlined into the callback; the
//! participants allocate nothing and take no lock here (building a held
//! finding runs Ruby code, only when a detector held one; quiet coverage's
//! batches, at most twice a second).

use crate::coverage::{hook, quiet};
use crate::detectors::held_findings;
use crate::engine::{blind_map, run_limits, signals, stack_depth};
use crate::feedback::{numbers, reported_pairs};
use crate::findings::sanitizer_stack;
use crate::process::target_state;
use rb_sys::VALUE;

/// What the participants report about one run of the target, filled in
/// place by [`after_input`].
#[derive(Debug, Default)]
pub struct InputOutcome {
    /// How long the target ran, in ns ([`target_state`]).
    pub elapsed_ns: u64,
    /// The finding a bug detector held during the run ([`held_findings`]).
    pub held_finding: Option<VALUE>,
}

/// Before the target runs `size` bytes at `data`, an input the engine
/// handed over (valid until the callback returns).
#[inline(always)]
pub fn before_input(data: *const u8, size: usize) {
    signals::before_input();
    run_limits::before_input();
    blind_map::before_input();
    stack_depth::before_input();
    quiet::before_input();
    reported_pairs::before_input();
    before_rerun(data, size);
}

/// Before the target runs the same input again: the participants that
/// watch a run start afresh; the input is not counted a second time.
#[inline(always)]
pub fn before_rerun(data: *const u8, size: usize) {
    hook::before_input();
    numbers::before_input();
    target_state::before_input(data, size);
}

/// After the target returned or raised: each participant's part of the
/// outcome, written into `outcome`.
#[inline(always)]
pub fn after_input(outcome: &mut InputOutcome) {
    outcome.elapsed_ns = target_state::after_input();
    sanitizer_stack::clear_below(stack_depth::deepest());
    outcome.held_finding = held_findings::after_input();
}

//! The process: what every subsystem reads or writes about this process as
//! a whole, below all of them. Which libFuzzer's entry points this process
//! calls ([`libfuzzer`]); what the fuzz target is doing right now
//! ([`target_state`]: which input runs, since when, on which thread, the
//! `-timeout`); the inputs run and libFuzzer's final statistics
//! ([`run_stats`]); the only output that is safe in a signal handler
//! ([`output`]); how long the calling thread has waited for a core
//! ([`run_delay`]); the name the C library prints for it
//! ([`program_name`]); and what a panic in ruzzy's own code does
//! ([`internal_error`]).
//!
//! Nothing here calls a subsystem above it: where a report needs more (the
//! Ruby backtrace, the artifact), the subsystem that makes the report reads
//! this state, never the other way round. Invariants: everything read per
//! input or in a signal handler is an atomic or set once before fuzzing;
//! nothing here allocates after start-up but a panic's report, which ends
//! the process.
//!
//! May use: crate::rb.

pub mod internal_error;
pub mod libfuzzer;
pub mod output;
pub mod program_name;
pub mod run_delay;
pub mod run_stats;
pub mod target_state;

/// Test only: a unit test's hold on the process-wide state, from
/// [`reset_for_tests`] until dropped.
#[cfg(test)]
pub(crate) struct TestProcess {
    _held: std::sync::MutexGuard<'static, ()>,
}

/// Test only: the one way a unit test starts from a fresh process. Tests
/// that touch a module's statics hold what it returns (a subsystem's own
/// `reset_for_tests` starts here and resets its modules too), so they run
/// one at a time, and each finds the process's state ([`target_state`],
/// [`run_stats`]) as it was before the first input, whatever ran before it.
#[cfg(test)]
pub(crate) fn reset_for_tests() -> TestProcess {
    static HELD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A failed test poisons the lock; the next one resets the state anyway.
    let held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    target_state::reset_for_tests();
    run_stats::reset_for_tests();
    TestProcess { _held: held }
}

#[cfg(test)]
mod tests {
    use crate::process::{reset_for_tests, run_stats, target_state};

    #[test]
    fn a_reset_starts_a_fresh_process() {
        let input = *b"abc";
        {
            let _process = reset_for_tests();
            target_state::configure_for_tests(7);
            target_state::before_input(input.as_ptr(), input.len());
            assert!(target_state::claim_report());
            target_state::mark_reporting_timeout();
            run_stats::start(run_stats::now_ns());
            run_stats::count_input(run_stats::executions());
            assert_eq!(target_state::input_in_progress(), Some(&input[..]));
        }
        let _process = reset_for_tests();
        assert_eq!(target_state::input_in_progress(), None);
        assert_eq!(target_state::timeout_secs(), 0);
        assert!(target_state::claim_report(), "no report made yet");
        assert!(!target_state::reporting_timeout());
        assert!(!run_stats::active());
        assert_eq!(run_stats::executions(), 0);
    }
}

//! The process: what every subsystem reads or writes about this process as
//! a whole, below all of them. Which libFuzzer's entry points this process
//! calls ([`libfuzzer`]); what the fuzz target is doing right now
//! ([`target_state`]: which input runs, since when, on which thread, the
//! `-timeout`); the inputs run and libFuzzer's final statistics
//! ([`run_stats`]); the only output that is safe in a signal handler
//! ([`output`]); and what a panic in ruzzy's own code does
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
pub mod run_stats;
pub mod target_state;

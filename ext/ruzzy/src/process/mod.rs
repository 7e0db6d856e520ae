//! The process: what every subsystem reads about this process, and the
//! only output that is safe in a signal handler.

pub mod internal_error;
pub mod libfuzzer;
pub mod output;
pub mod run_stats;
pub mod target_state;

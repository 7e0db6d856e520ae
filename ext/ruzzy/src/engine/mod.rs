//! The engine: libFuzzer or LibAFL's libFuzzer-compatible runtime (the one
//! this process calls, [`crate::process::libfuzzer`]), started once
//! ([`driver`]), and the per-input callback it calls ([`callback`]) with
//! what each subsystem does before and after an input ([`lifecycle`]), the
//! run limits, memory limit and blind coverage map an engine without them
//! needs ([`run_limits`], [`memory_watch`], [`blind_map`]), what keeps an
//! input rejected out of the corpus under a libFuzzer that ignores -1
//! ([`rejection`], with [`module_counters`] and [`stack_depth`]), with what keeps
//! libFuzzer's crash and timeout handling working inside Ruby
//! ([`signals`], with how long a timed-out target is given to come back to
//! Ruby, [`timeout_grace`]), and the preload's gate for hooks that only feed the value
//! profile ([`value_profile_gate`]).
//!
//! The top of the crate: it is where the subsystems meet, once per run
//! (driver) and once per input (callback), and nothing but `lib.rs` calls
//! into it.
//!
//! May use: crate::coverage, crate::detectors, crate::error, crate::feedback, crate::finding_kind, crate::findings, crate::input, crate::process, crate::rb, crate::ruby_classes.

pub mod blind_map;
pub mod callback;
pub mod driver;
pub mod lifecycle;
pub mod memory_watch;
pub mod module_counters;
pub mod rejection;
pub mod run_limits;
pub mod signals;
pub mod stack_depth;
pub mod timeout_grace;
pub mod value_profile_gate;

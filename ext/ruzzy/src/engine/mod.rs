//! The engine: libFuzzer or LibAFL's libFuzzer-compatible runtime, chosen
//! once per process ([`libfuzzer`]), started once ([`driver`]), and the
//! per-input callback it calls ([`callback`]), the run limits, memory limit
//! and blind coverage map an engine without them needs ([`run_limits`],
//! [`memory_watch`], [`blind_map`]),
//! with what keeps libFuzzer's crash and timeout handling working inside
//! Ruby ([`signals`], [`target_state`]) and what turns a panic in ruzzy's
//! own code into an internal error ([`internal_error`]), and the preload's
//! gate for hooks that only feed the value profile ([`value_profile_gate`]).
//!
//! May use every other subsystem: it is where they meet, once per run
//! (driver) and once per input (callback). Nothing else calls into it but
//! to register coverage with the chosen libFuzzer and to ask whether the
//! target is running.

pub mod blind_map;
pub mod callback;
pub mod driver;
pub mod memory_watch;
pub mod run_limits;
pub mod signals;
pub mod value_profile_gate;

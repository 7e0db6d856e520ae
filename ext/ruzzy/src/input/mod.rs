//! Structured inputs: the fuzzed data provider ([`fuzzed_data_provider`],
//! the Ruby binding over the plain-Rust rules of [`data_provider`]),
//! custom mutators written in Ruby ([`custom_mutator`]) and the
//! structure-aware mutator of typed targets ([`structured`]).
//!
//! Uses [`crate::rb`] and [`crate::error`]; a custom mutator that fails is
//! reported through [`crate::findings`]; the structure-aware mutator reads
//! the values the target wanted from [`crate::feedback`].
//!
//! May use: crate::error, crate::feedback, crate::findings, crate::process, crate::rb.

pub mod custom_mutator;
pub mod data_provider;
pub mod fuzzed_data_provider;
pub mod structured;

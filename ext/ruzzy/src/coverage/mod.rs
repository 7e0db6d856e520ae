//! Coverage: the interpreter's line and branch events, located
//! ([`locator`] over [`location`], [`iseq_cache`] and [`path_registry`]) and
//! counted as edges in libFuzzer's 8-bit counters ([`sancov_8bit`]) by the
//! event [`hook`], which also keeps the lines the inputs ran
//! ([`lines_reached`]). [`quiet`] switches off the events of methods and
//! blocks that have found nothing new for a while, between inputs, and
//! samples them again now and then. [`layout_probe`] lets the tests check
//! what the locator reads from the interpreter.
//!
//! Uses the interpreter ([`crate::rb`]) and the process's libFuzzer, with
//! which the map is registered, and what the target is doing
//! ([`crate::process`]); the comparison feedback above uses the locator
//! and counts its call sites here.
//!
//! May use: crate::process, crate::rb.

pub mod hook;
pub mod iseq_cache;
pub mod layout_probe;
pub mod lines_reached;
pub mod location;
pub mod locator;
pub mod path_registry;
pub mod quiet;
pub mod sancov_8bit;

//! Coverage: the interpreter's line and branch events, located
//! ([`locator`] over [`location`], [`iseq_cache`] and [`path_registry`]) and
//! counted as edges in libFuzzer's 8-bit counters ([`sancov_8bit`]) by the
//! event [`hook`]. [`layout_probe`] lets the tests check what the locator
//! reads from the interpreter.
//!
//! Uses [`crate::rb`] for the interpreter, [`crate::engine`] only to register
//! the map with the chosen libFuzzer; the comparison feedback uses the
//! locator and counts its call sites here.

pub mod hook;
pub mod iseq_cache;
pub mod layout_probe;
pub mod location;
pub mod locator;
pub mod path_registry;
pub mod sancov_8bit;

//! The native half of the bug detectors (`lib/ruzzy/detectors`): their
//! findings, held until the input ends so the target cannot rescue them
//! ([`held_findings`], with the ReDoS watch), and the feedback that steers
//! inputs towards their canaries ([`guidance`]).
//!
//! Uses [`crate::feedback`]'s comparison sites and [`crate::rb`].

pub mod guidance;
pub mod held_findings;

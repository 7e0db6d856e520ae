//! The native half of the bug detectors (`lib/ruzzy/detectors`): their
//! findings, held until the input ends so the target cannot rescue them
//! ([`held_findings`], with the ReDoS watch), and the feedback that steers
//! inputs towards their canaries ([`guidance`]).
//!
//! C code's network connections pass [`connect_guard`] (through
//! [`got_patch`]), the SSRF detector's backstop.
//!
//! Uses [`crate::feedback`]'s comparison sites and running match, and
//! [`crate::rb`].
//!
//! May use: crate::coverage, crate::feedback, crate::process, crate::rb, crate::ruby_classes.

pub mod connect_guard;
pub mod got_patch;
pub mod guidance;
pub mod held_findings;

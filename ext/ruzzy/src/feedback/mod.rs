//! Comparison feedback: what the target compared its input with, reported
//! to libFuzzer's comparison hooks so that it can put those values into new
//! inputs. [`compare_hooks`] holds the one table of hooked methods (one
//! module per receiver type); they report through [`compare_sites`] (one PC
//! per Ruby call site; [`reported_pairs`] skips operands it reported
//! lately), [`numbers`] (numbers spelt in the input's text or
//! read from its bytes, where [`unpack_format`] says) and [`regex_model`]
//! (what a Regexp would have matched; [`recent_failures`] says which
//! failed matches are worth modelling). [`harness_guidance`]
//! is the same feedback given by the harness itself. [`wanted`] keeps the
//! values the target looked for that a typed input's pools hold. [`running_match`]
//! says which hooked regular-expression match runs, for the ReDoS detector.
//!
//! Uses [`crate::coverage`] to locate call sites, [`crate::rb`] to read the
//! operands, the process's libFuzzer ([`crate::process`]) to report them;
//! the hooks allocate nothing and take no lock.
//!
//! May use: crate::coverage, crate::process, crate::rb.

pub mod compare_hooks;
pub mod compare_sites;
pub mod harness_guidance;
pub mod numbers;
pub mod recent_failures;
pub mod regex_model;
pub mod reported_pairs;
pub mod running_match;
pub mod unpack_format;
pub mod wanted;

/// Test only: a fresh process ([`crate::process::reset_for_tests`]) with
/// nothing remembered here yet: no conversion, no failed match.
#[cfg(test)]
pub(crate) fn reset_for_tests() -> crate::process::TestProcess {
    let process = crate::process::reset_for_tests();
    numbers::before_input();
    recent_failures::reset_for_tests();
    process
}

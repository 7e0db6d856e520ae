//! Findings: what went wrong with one input, reported and kept where tools
//! look for it. [`report`] describes a Ruby exception or a bad return value
//! and ends the process; [`fatal`] reports a crash, timeout or
//! out-of-memory for an engine that leaves them to ruzzy; [`slow_inputs`] reports inputs far slower than the
//! rest; [`crash_frames`], [`ruby_backtrace`] and [`symbolize`] give
//! libFuzzer's crash, timeout and coverage printouts their Ruby frames;
//! [`sanitizer_stack`] keeps AddressSanitizer's view of the stack true
//! across Ruby's non-local exits (exceptions, `break`, `throw`) and fibers.
//!
//! Uses [`crate::rb`], the process's state and signal-safe output
//! ([`crate::process`]), and the coverage map (to describe ruzzy's PCs).
//! Whatever runs in a signal handler here is async-signal-safe.
//!
//! May use: crate::coverage, crate::finding_kind, crate::process, crate::rb, crate::ruby_classes.

/// The Ruby class that formats reports (`lib/ruzzy/findings/report.rb`).
pub(crate) const RUBY_REPORT: &std::ffi::CStr =
    crate::ruby_classes::RubyClass::FindingsReport.path();

pub mod crash_frames;
pub mod fatal;
pub mod frame_token;
pub mod report;
pub mod reproduce;
pub mod ruby_backtrace;
pub mod sanitizer_stack;
pub mod slow_inputs;
pub mod symbolize;

/// Test only: a fresh process ([`crate::process::reset_for_tests`]) with
/// nothing kept here yet: no frames kept, no input timed.
#[cfg(test)]
pub(crate) fn reset_for_tests() -> crate::process::TestProcess {
    let process = crate::process::reset_for_tests();
    crash_frames::reset_for_tests();
    slow_inputs::reset_for_tests();
    process
}

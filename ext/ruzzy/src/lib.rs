//! Native core of ruzzy, loaded by `lib/ruzzy.rb` as `ruzzy/ruzzy_ext`.
//!
//! This file only wires modules to Ruby. Each module owns one job:
//! - [`engine`]: which libFuzzer runs (a preloaded one or the bundled copy);
//! - [`driver`]: `Ruzzy._fuzz`, hands control to libFuzzer exactly once;
//! - [`callback`]: the per-input callback libFuzzer calls;
//! - [`finding`]: reporting a finding before libFuzzer writes the artifact;
//! - [`signals`]: giving libFuzzer the signals Ruby took at start-up;
//! - [`coverage_hook`]: Ruby coverage events to edge counters, using
//!   [`location`] (process-stable ids, over [`interpreter_layout`], checked
//!   by [`layout_probe`]), [`locator`] (a frame's location and whether its
//!   code is instrumented, over [`iseq_cache`], the per-iseq memo, and
//!   [`path_registry`], include/exclude and path names) and [`sancov_8bit`]
//!   (the counters and PC table, fitted to the code when fuzzing starts);
//! - [`symbolize`]: describing PCs and the Ruby stack for libFuzzer;
//! - [`target_state`]: whether the target runs, for signal handlers;
//! - [`slow_inputs`]: inputs far slower than the median, reported and kept;
//! - [`ruby_backtrace`]: the target's Ruby backtrace from a signal handler
//!   (at Ruby's next safe point, or read from the frames);
//! - [`compare_hooks`]: Ruby methods reporting comparisons, through
//!   [`compare_sites`] (one PC per instrumented Ruby call site, located by
//!   the coverage's [`locator`]); [`regex_hooks`] for pattern matches
//!   (over [`regex_model`], what a Regexp would have matched) and
//!   [`number_hooks`] for Floats and text-to-number conversions (over
//!   [`number_feedback`]);
//! - [`detector_findings`]: findings of the bug detectors, held until the
//!   input ends, and ReDoS timing; [`detector_guidance`]: feedback towards
//!   their canaries;
//! - [`custom_mutator`]: mutators and crossover written in Ruby;
//! - [`fuzzed_data_provider`]: typed values from an input, over
//!   [`data_provider`] (Ruzzy 0.8's and LLVM's byte-splitting rules);
//! - [`ruzzy_error`]: exceptions raised by native code, built by their
//!   Ruby tags;
//! - [`compat`]: Ruzzy 0.8's native module functions;
//! - [`sanitizer_stack`]: clearing AddressSanitizer stack poisoning when
//!   Ruby raises.
//!
//! Invariant: every `#[magnus::init]` definition propagates its error with `?`,
//! so a broken binding raises at `require`, never later.

// libFuzzer's static archive is only linked when something names the crate.
use libfuzzer_sys as _;

mod callback;
mod compare_hooks;
mod compare_sites;
mod compat;
mod coverage_hook;
mod custom_mutator;
mod data_provider;
mod detector_findings;
mod detector_guidance;
mod driver;
mod engine;
mod finding;
mod fuzzed_data_provider;
mod interpreter_layout;
mod iseq_cache;
mod layout_probe;
mod location;
mod locator;
mod number_feedback;
mod number_hooks;
mod path_registry;
mod rb;
mod regex_hooks;
mod regex_model;
mod ruby_backtrace;
mod ruzzy_error;
mod sancov_8bit;
mod sanitizer_stack;
mod signals;
mod slow_inputs;
mod symbolize;
mod target_state;

use magnus::{function, prelude::*, Error, Ruby};

/// libfuzzer-sys exports `LLVMFuzzerTestOneInput`, which calls this symbol.
/// ruzzy never uses that entry point (it passes its own callback to
/// `LLVMFuzzerRunDriver`), but the symbol must exist for `require` to work.
#[allow(improper_ctypes_definitions)]
#[no_mangle]
pub extern "C" fn rust_fuzzer_test_input(_input: &[u8]) -> i32 {
    0
}

extern "C" {
    fn ruzzy_link_sanitizer_callbacks();
}

#[magnus::init(name = "ruzzy_ext")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    // SAFETY: an empty C function; calling it keeps sanitizer_callbacks.c
    // linked in, which the bundled libFuzzer's weak references need.
    unsafe { ruzzy_link_sanitizer_callbacks() };
    location::configure();
    let ruzzy = ruby.define_module("Ruzzy")?;
    ruzzy.define_module_function("_fuzz", function!(driver::fuzz, 5))?;
    ruzzy.define_module_function("_mutate", function!(custom_mutator::mutate, 2))?;
    ruzzy.define_module_function("_engine", function!(driver::engine_description, 0))?;
    ruzzy.const_set("DEFAULT_MAP_SIZE", sancov_8bit::DEFAULT_SIZE)?;
    ruzzy.const_set(
        "FITTED_MAP_SIZES",
        ruby.range_new(
            sancov_8bit::MIN_FITTED_SIZE,
            sancov_8bit::MAX_FITTED_SIZE,
            false,
        )?,
    )?;
    compare_hooks::define(ruzzy)?;
    ruzzy.define_module_function("_regexp_words", function!(regex_hooks::regexp_words, 1))?;
    define_detector_functions(ruzzy)?;
    ruzzy.define_module_function(
        "c_libfuzzer_is_loaded",
        function!(compat::libfuzzer_is_loaded, 0),
    )?;
    ruzzy.define_module_function("c_trace_cmp8", function!(compat::trace_cmp8, 2))?;
    ruzzy.define_module_function("c_trace_div8", function!(compat::trace_div8, 1))?;
    fuzzed_data_provider::define(ruby, ruzzy)?;
    ruzzy.define_module_function(
        "_asan_present?",
        function!(sanitizer_stack::asan_present, 0),
    )?;
    ruzzy.define_module_function(
        "_clear_stack_poisoning",
        function!(sanitizer_stack::clear_stack_poisoning, 0),
    )?;
    ruzzy.define_module_function("_start_coverage", function!(coverage_hook::start, 3))?;
    ruzzy.define_module_function("_fit_coverage", function!(coverage_hook::fit, 1))?;
    ruzzy.define_module_function(
        "_instrumented_path?",
        function!(coverage_hook::instrumented_path, 1),
    )?;
    ruzzy.define_module_function("_coverage_info", function!(coverage_hook::info, 0))?;
    ruzzy.define_module_function("_counters_hit", function!(coverage_hook::counters_hit, 0))?;
    ruzzy.define_module_function(
        "_clear_counters",
        function!(coverage_hook::clear_counters, 0),
    )?;
    ruzzy.define_module_function("_probe_iseq", function!(layout_probe::probe_iseq, 1))?;
    ruzzy.define_module_function("_probe_caller", function!(layout_probe::probe_caller, 0))?;
    ruzzy.define_module_function(
        "_counter_location",
        function!(coverage_hook::counter_location, 1),
    )?;
    Ok(())
}

/// The native functions of the bug detectors (`lib/ruzzy/detectors.rb`).
fn define_detector_functions(ruzzy: magnus::RModule) -> Result<(), Error> {
    ruzzy.define_module_function("_detector_report", function!(detector_findings::report, 1))?;
    ruzzy.define_module_function(
        "_watch_regexp_timeouts",
        function!(detector_findings::watch_regexp_timeouts, 1),
    )?;
    ruzzy.define_module_function(
        "_time_regexp_matches",
        function!(detector_findings::time_regexp_matches, 0),
    )?;
    ruzzy.define_module_function(
        "_running_match",
        function!(detector_findings::running_match, 0),
    )?;
    ruzzy.define_module_function(
        "_guide_towards",
        function!(detector_guidance::guide_towards, 2),
    )?;
    ruzzy.define_module_function("_guide_equal", function!(detector_guidance::guide_equal, 2))?;
    ruzzy.define_module_function("_guide_code", function!(detector_guidance::guide_code, 1))?;
    detector_guidance::define(ruzzy)?;
    ruzzy.define_module_function(
        "_guide_missing_names",
        function!(detector_findings::guide_missing_names, 1),
    )?;
    Ok(())
}

//! Native core of ruzzy, loaded by `lib/ruzzy.rb` as `ruzzy/ruzzy_ext`.
//!
//! This file only wires modules to Ruby; `docs/architecture.md` has the
//! module map (file, size, job) and the invariants that hold across them.
//! Each module owns one job:
//! - [`driver`]: `Ruzzy._fuzz`, hands control to libFuzzer exactly once,
//!   through [`engine`] (a preloaded libFuzzer or the bundled copy);
//! - [`callback`]: the per-input callback; [`finding`] and [`slow_inputs`]
//!   report what went wrong, [`crash_frames`] where crash-grouping tools
//!   read it; [`signals`], [`target_state`],
//!   [`ruby_backtrace`] and [`symbolize`] keep libFuzzer's crash and timeout
//!   handling working inside Ruby;
//! - [`coverage_hook`]: coverage events to the edge counters of
//!   [`sancov_8bit`], located by the one [`locator`] (over [`location`],
//!   [`iseq_cache`] and [`path_registry`]; [`layout_probe`] lets tests check
//!   what it reads);
//! - [`compare_hooks`]: one table of hooked methods, one module per receiver
//!   type, reporting through [`compare_sites`] (one PC per Ruby call site),
//!   [`number_feedback`] and [`regex_model`];
//! - [`detector_findings`] and [`detector_guidance`]: the bug detectors'
//!   findings and their feedback towards the canaries;
//! - [`custom_mutator`], [`fuzzed_data_provider`] (over [`data_provider`]):
//!   structured inputs;
//! - [`ruzzy_error`], [`compat`], [`sanitizer_stack`]: exceptions by their
//!   Ruby tags, Ruzzy 0.8's functions, AddressSanitizer's stack;
//! - [`internal_error`]: a panic in ruzzy's own code, reported as such and
//!   never saved as the target's crash;
//! - [`rb`]: the only module that calls the raw Ruby C API and libdl.
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
mod crash_frames;
mod custom_mutator;
mod data_provider;
mod detector_findings;
mod detector_guidance;
mod driver;
mod engine;
mod finding;
mod fuzzed_data_provider;
mod internal_error;
mod iseq_cache;
mod layout_probe;
mod location;
mod locator;
mod number_feedback;
mod path_registry;
mod rb;
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
    crash_frames::register_with_preload();
    location::configure();
    let ruzzy = ruby.define_module("Ruzzy")?;
    internal_error::install(ruzzy)?;
    finding::configure(ruzzy)?;
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
    compare_hooks::define(ruby, ruzzy)?;
    ruzzy.define_module_function(
        "_regexp_words",
        function!(compare_hooks::regexp::regexp_words, 1),
    )?;
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
    ruzzy.define_module_function(
        "_rules_include?",
        function!(path_registry::rules_include, 3),
    )?;
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

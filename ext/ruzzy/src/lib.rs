//! Native core of ruzzy, loaded by `lib/ruzzy.rb` as `ruzzy/ruzzy_ext`.
//!
//! This file only wires modules to Ruby; `docs/architecture.md` has the
//! module map (file, size, job) and the invariants that hold across them.
//! Each module owns one job:
//! - [`driver`]: `Ruzzy::Native._fuzz`, hands control to libFuzzer exactly once,
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

/// Defines `module.NAME` for each `NAME => function, arity` (magnus's
/// `function!`), propagating the first error.
macro_rules! module_functions {
    ($module:expr, { $($name:literal => $function:path, $arity:tt;)* }) => {
        $( $module.define_module_function($name, function!($function, $arity))?; )*
    };
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
    ruzzy.const_set("DEFAULT_MAP_SIZE", sancov_8bit::DEFAULT_SIZE)?;
    ruzzy.const_set(
        "FITTED_MAP_SIZES",
        ruby.range_new(
            sancov_8bit::MIN_FITTED_SIZE,
            sancov_8bit::MAX_FITTED_SIZE,
            false,
        )?,
    )?;
    // Ruzzy 0.8's public functions.
    module_functions!(ruzzy, {
        "c_libfuzzer_is_loaded" => compat::libfuzzer_is_loaded, 0;
        "c_trace_cmp8" => compat::trace_cmp8, 2;
        "c_trace_div8" => compat::trace_div8, 1;
    });
    compare_hooks::define(ruby, ruzzy)?;
    fuzzed_data_provider::define(ruby, ruzzy)?;
    detector_guidance::define(ruzzy)?;
    define_natives(ruzzy.define_module("Native")?)
}

/// The plumbing behind the Ruby code (`Ruzzy::Native._NAME`), out of the
/// user-facing `Ruzzy` module. The probes that only tests use exist when
/// `RUZZY_TEST_PROBES=1`.
fn define_natives(native: magnus::RModule) -> Result<(), Error> {
    module_functions!(native, {
        "_fuzz" => driver::fuzz, 5;
        "_mutate" => custom_mutator::mutate, 2;
        "_engine" => driver::engine_description, 0;
        "_regexp_words" => compare_hooks::regexp::regexp_words, 1;
        "_asan_present?" => sanitizer_stack::asan_present, 0;
        "_clear_stack_poisoning" => sanitizer_stack::clear_stack_poisoning, 0;
        "_start_coverage" => coverage_hook::start, 3;
        "_fit_coverage" => coverage_hook::fit, 1;
        "_instrumented_path?" => coverage_hook::instrumented_path, 1;
        "_coverage_info" => coverage_hook::info, 0;
        "_rules_include?" => path_registry::rules_include, 3;
        "_counter_location" => coverage_hook::counter_location, 1;
        "_detector_report" => detector_findings::report, 1;
        "_watch_regexp_timeouts" => detector_findings::watch_regexp_timeouts, 1;
        "_time_regexp_matches" => detector_findings::time_regexp_matches, 0;
        "_running_match" => detector_findings::running_match, 0;
        "_guide_towards" => detector_guidance::guide_towards, 2;
        "_guide_equal" => detector_guidance::guide_equal, 2;
        "_guide_code" => detector_guidance::guide_code, 1;
        "_guide_missing_names" => detector_findings::guide_missing_names, 1;
    });
    if std::env::var("RUZZY_TEST_PROBES").is_ok_and(|value| value == "1") {
        module_functions!(native, {
            "_counters_hit" => coverage_hook::counters_hit, 0;
            "_clear_counters" => coverage_hook::clear_counters, 0;
            "_probe_iseq" => layout_probe::probe_iseq, 1;
            "_probe_caller" => layout_probe::probe_caller, 0;
        });
    }
    Ok(())
}

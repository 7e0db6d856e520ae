//! Native core of ruzzy, loaded by `lib/ruzzy.rb` as `ruzzy/ruzzy_ext`.
//!
//! This file only wires the subsystems to Ruby; each folder's `mod.rs` says
//! what it is for and what it may use, and `docs/architecture.md` draws the
//! tree (file, size, job) with the invariants that hold across it:
//! - [`engine`]: libFuzzer, chosen and started once, and the per-input callback;
//! - [`coverage`]: coverage events to libFuzzer's edge counters;
//! - [`feedback`]: comparisons, conversions and pattern matches to libFuzzer's
//!   comparison hooks;
//! - [`findings`]: what went wrong with an input, reported where tools read it;
//! - [`detectors`]: the native half of the bug detectors;
//! - [`input`]: the fuzzed data provider and custom mutators;
//! - [`rb`]: the only module that calls the raw Ruby C API and libdl;
//! - [`error`] and [`compat`]: exceptions by their Ruby tags, Ruzzy 0.8's
//!   functions;
//! - [`finding_kind`] and [`ruby_classes`]: the kinds of finding and the
//!   Ruby classes native code calls, each named once (a bottom layer that
//!   uses nothing of the crate).
//!
//! - [`process`]: what every subsystem reads about the process (the chosen
//!   libFuzzer, the target's state, the run's statistics, signal-safe output).
//!
//! Invariant: every `#[magnus::init]` definition propagates its error with `?`,
//! so a broken binding raises at `require`, never later.
//!
//! May use: crate::compat, crate::coverage, crate::detectors, crate::engine, crate::error, crate::feedback, crate::finding_kind, crate::findings, crate::input, crate::process, crate::rb, crate::ruby_classes.

// libFuzzer's static archive is only linked when something names the crate.
use libfuzzer_sys as _;

// The architectures whose machine code ruzzy knows: the comparison stubs
// (feedback/compare_sites.rs), a fault's stack pointer (engine/signals.rs),
// the GOT's relocation numbers (detectors/got_patch.rs).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("ruzzy supports x86_64 and aarch64 (Linux) only");

mod compat;
mod coverage;
mod detectors;
mod engine;
mod error;
mod feedback;
mod finding_kind;
mod findings;
mod input;
mod process;
mod rb;
mod ruby_classes;

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
    // SAFETY: an empty C function; calling it keeps engine/sanitizer_callbacks.c
    // linked in, which the bundled libFuzzer's weak references need.
    unsafe { ruzzy_link_sanitizer_callbacks() };
    process::program_name::keep();
    findings::crash_frames::register_with_preload();
    findings::reproduce::register_with_asan();
    findings::reproduce::register_with_preload();
    let ruzzy = ruby.define_module("Ruzzy")?;
    let settings: magnus::RModule = ruzzy.const_get("Settings")?;
    coverage::location::configure(&settings.const_get::<_, String>("LOCATIONS")?);
    process::internal_error::install(ruzzy)?;
    error::resolve(ruby, ruzzy)?;
    finding_kind::resolve(ruby, ruzzy)?;
    findings::report::configure(ruzzy)?;
    ruzzy.const_set("DEFAULT_MAP_SIZE", coverage::sancov_8bit::DEFAULT_SIZE)?;
    ruzzy.const_set("GUIDANCE_STEPS", feedback::harness_guidance::MAX_STEPS)?;
    ruzzy.const_set(
        "FITTED_MAP_SIZES",
        ruby.range_new(
            coverage::sancov_8bit::MIN_FITTED_SIZE,
            coverage::sancov_8bit::MAX_FITTED_SIZE,
            false,
        )?,
    )?;
    // Ruzzy 0.8's public functions.
    module_functions!(ruzzy, {
        "c_libfuzzer_is_loaded" => compat::libfuzzer_is_loaded, 0;
        "c_trace_cmp8" => compat::trace_cmp8, 2;
        "c_trace_div8" => compat::trace_div8, 1;
    });
    feedback::compare_hooks::define(ruby, ruzzy)?;
    input::fuzzed_data_provider::define(ruby, ruzzy)?;
    detectors::guidance::define(ruzzy)?;
    let native = ruzzy.define_module("Native")?;
    native.const_set("FINDING_KINDS", finding_kind::names(ruby))?;
    native.const_set("ERROR_TAGS", error::tag_names(ruby))?;
    native.const_set("CALLED_CLASSES", ruby_classes::paths(ruby))?;
    input::structured::define(ruby, native)?;
    define_natives(native)
}

/// The plumbing behind the Ruby code (`Ruzzy::Native._NAME`), out of the
/// user-facing `Ruzzy` module. The probes that only tests use exist when
/// `RUZZY_TEST_PROBES=1`.
fn define_natives(native: magnus::RModule) -> Result<(), Error> {
    module_functions!(native, {
        "_fuzz" => engine::driver::fuzz, 6;
        "_mutate" => input::custom_mutator::mutate, 2;
        "_engine" => engine::driver::engine_description, 0;
        "_engine_kind" => engine::driver::engine_kind, 0;
        "_set_run_limits" => engine::run_limits::configure, 3;
        "_regexp_words" => feedback::compare_hooks::regexp::regexp_words, 1;
        "_asan_present?" => findings::sanitizer_stack::asan_present, 0;
        "_configure_reproduction" => findings::reproduce::configure, 7;
        "_overdue_input" => process::target_state::overdue_input, 1;
        "_clear_stack_poisoning" => findings::sanitizer_stack::clear_stack_poisoning, 0;
        "_clear_fiber_stack" => findings::sanitizer_stack::clear_fiber_stack, 1;
        "_start_coverage" => coverage::hook::start, 3;
        "_fit_coverage" => coverage::hook::fit, 1;
        "_stop_ruby_branch_counter" => coverage::hook::stop_ruby_branch_counter, 1;
        "_fitted_map_size" => coverage::sancov_8bit::fitted_size, 1;
        "_instrumented_path?" => coverage::hook::instrumented_path, 1;
        "_coverage_info" => coverage::hook::info, 0;
        "_quiet_coverage" => coverage::quiet::configure, 4;
        "_jit_calls" => coverage::quiet::jit_calls, 1;
        "_reached" => coverage::hook::reached, 0;
        "_executions" => process::run_stats::executions, 0;
        "_rules_include?" => coverage::path_registry::rules_include, 3;
        "_counter_location" => coverage::hook::counter_location, 1;
        "_detector_report" => detectors::held_findings::report, 1;
        "_watch_regexp_timeouts" => detectors::held_findings::watch_regexp_timeouts, 1;
        "_watch_pattern_errors" => detectors::held_findings::watch_pattern_errors, 1;
        "_guard_connect" => detectors::connect_guard::guard, 0;
        "_allow_connect" => detectors::connect_guard::allow, 4;
        "_time_regexp_matches" => detectors::held_findings::time_regexp_matches, 0;
        "_running_match" => detectors::held_findings::running_match, 0;
        "_guide_towards" => detectors::guidance::guide_towards, 2;
        "_guide_equal" => detectors::guidance::guide_equal, 2;
        "_guide_code" => detectors::guidance::guide_code, 1;
        "_guide_equal_at" => feedback::harness_guidance::guide_equal_at, 3;
        "_guide_include_at" => feedback::harness_guidance::guide_include_at, 3;
        "_explore_state" => feedback::harness_guidance::explore_state, 2;
        "_count_steps" => feedback::harness_guidance::count_steps, 2;
        "_guide_missing_names" => detectors::held_findings::guide_missing_names, 1;
    });
    if std::env::var("RUZZY_TEST_PROBES").is_ok_and(|value| value == "1") {
        module_functions!(native, {
            "_counters_hit" => coverage::hook::counters_hit, 0;
            "_clear_counters" => coverage::hook::clear_counters, 0;
            "_quiet_coverage_tick" => coverage::quiet::tick, 1;
            "_quiet_coverage_probe_cost" => coverage::quiet::probe_cost, 1;
            "_probe_iseq" => coverage::layout_probe::probe_iseq, 1;
            "_probe_caller" => coverage::layout_probe::probe_caller, 0;
            "_probe_regexp_model" => feedback::compare_hooks::regexp::probe_model, 3;
            "_probe_structure_layout" => input::structured::probe_layout, 2;
            "_probe_structure_mutate" => input::structured::probe_mutate, 4;
            "_probe_structure_wanted" => input::structured::probe_wanted, 3;
        });
    }
    Ok(())
}

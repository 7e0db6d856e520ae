//! `Ruzzy::Native._fuzz`: hands control to libFuzzer, exactly once.
//!
//! The Ruby side in front (`Ruzzy.fuzz`, `Ruzzy::Session`) owns defaults,
//! validation, messages and documentation, and hands over what it read from
//! libFuzzer's flags (`Ruzzy::LibFuzzerArgs`). This function refuses a
//! second start and what libFuzzer would misread (NUL bytes, no program
//! name, custom mutators with a preloaded libFuzzer), wires the pieces that
//! run per input (target, custom mutators, timeout state, signal handlers,
//! coverage registration), prints the engine's `INFO:` lines, and calls
//! `LLVMFuzzerRunDriver` of the chosen [`crate::process::libfuzzer`].
//!
//! Invariants:
//! - the driver starts at most once per process (libFuzzer cannot run twice);
//! - argv strings are leaked on purpose: libFuzzer keeps pointers into them
//!   for the rest of the process;
//! - nothing here runs per input (see [`crate::engine::callback`]).

use crate::coverage::hook;
use crate::engine::{blind_map, callback, signals, value_profile_gate};
use crate::error::{tagged, Tag};
use crate::input::{custom_mutator, structured};
use crate::process::{libfuzzer, target_state};
use magnus::{
    rb_sys::AsRawValue, value::ReprValue, Error, RArray, RString, Ruby, TryConvert, Value,
};
use std::ffi::{c_char, c_int, CString};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STARTED: AtomicBool = AtomicBool::new(false);

/// `Ruzzy::Native._engine`: the `INFO:` line naming the libFuzzer that will run.
pub fn engine_description() -> String {
    libfuzzer::get().describe()
}

/// `Ruzzy::Native._engine_kind`: "libfuzzer" or "libafl" (`ruzzy --engine`).
pub fn engine_kind() -> &'static str {
    libfuzzer::get().kind.name()
}

/// `Ruzzy::Native._fuzz(target, args, ignoring, mutator, crossover, schema)`:
/// `schema` describes a typed target's generators (nil for a byte
/// target), for the structure-aware mutator; `args` is a
/// `Ruzzy::LibFuzzerArgs`, libFuzzer's argument list as Ruby validated and
/// read it (`to_a`, `timeout` in seconds, `runs_children?`,
/// `value_profile?`). Returns
/// libFuzzer's status in the rare cases where the driver returns (for
/// example `-help=1`).
pub fn fuzz(
    ruby: &Ruby,
    target: Value,
    args: Value,
    ignoring: bool,
    mutator: Value,
    crossover: Value,
    schema: Value,
) -> Result<i64, Error> {
    let argv = c_strings(ruby, args.funcall("to_a", ())?)?;
    let timeout: u64 = args.funcall("timeout", ())?;
    let runs_children: bool = args.funcall("runs_children?", ())?;
    let value_profile: bool = args.funcall("value_profile?", ())?;
    crate::ruby_classes::check(ruby)?;
    if STARTED.swap(true, Ordering::SeqCst) {
        return Err(tagged(
            ruby,
            Tag::AlreadyFuzzing,
            "Ruzzy.fuzz was already called in this process; libFuzzer can run only once per process"
                .to_owned(),
        ));
    }

    let engine = libfuzzer::get();
    let customised = !mutator.is_nil() || !crossover.is_nil();
    let preloaded = matches!(engine.origin, libfuzzer::Origin::Preloaded { .. });
    let hooks = !preloaded || custom_mutator::preload_takes_mutators();
    let libafl = engine.is_libafl();
    if customised && !hooks {
        STARTED.store(false, Ordering::SeqCst);
        let message = if libafl {
            "custom mutators and crossover do not run under the libafl engine (yet); use the \
             libfuzzer engine"
        } else {
            "custom mutators and crossover need ruzzy's bundled libFuzzer or a sanitizer preload \
             ruzzy built; this preloaded libFuzzer has no custom mutator hooks (rebuild the \
             preloads: gem pristine ruzzy)"
        };
        return Err(tagged(ruby, Tag::InvalidArguments, message.to_owned()));
    }
    if !hooks {
        if !schema.is_nil() {
            let _ =
                writeln!(
                std::io::stderr(),
                "INFO: ruzzy: typed inputs are mutated as bytes: {} has no custom mutator hooks \
                 for structure-aware mutation",
                if libafl { "the libafl engine" } else { "this preloaded libFuzzer" }
            );
        }
    } else if mutator.is_nil() {
        if let Err(error) = structured::register(ruby, schema) {
            STARTED.store(false, Ordering::SeqCst);
            return Err(error);
        }
    }
    custom_mutator::register(mutator.as_raw(), crossover.as_raw(), engine.mutate);
    if preloaded && hooks {
        custom_mutator::hand_to_preload();
    }
    callback::install_target(target.as_raw(), ignoring);
    target_state::configure(timeout);
    let _ = writeln!(std::io::stderr(), "{}", engine.describe());
    let _ = match timeout {
        0 => writeln!(
            std::io::stderr(),
            "INFO: ruzzy: no per-input timeout (-timeout=0)"
        ),
        secs => writeln!(
            std::io::stderr(),
            "INFO: ruzzy: an input running longer than {secs} s is a timeout (-timeout=N to change)"
        ),
    };
    if let (Some(mismatch), true) = (&engine.mismatch, libafl) {
        // LibAFL's runtime would stop with "No maps available".
        STARTED.store(false, Ordering::SeqCst);
        return Err(tagged(
            ruby,
            Tag::EngineUnavailable,
            format!(
                "LibAFL's runtime would not see ruzzy's coverage: {mismatch}. Preload LibAFL's \
                 runtime in front of any other fuzzing or sanitizer library (ruzzy --engine=libafl \
                 arranges it, --sanitizer=address included)"
            ),
        ));
    }
    if libafl {
        crate::findings::reproduce::register_with_ubsan_under_libafl();
    }
    if let Some(mismatch) = &engine.mismatch {
        let _ = writeln!(
            std::io::stderr(),
            "WARNING: ruzzy: {mismatch}; coverage registered there is invisible to the fuzzer. \
             Preload one library that carries both libFuzzer and the sanitizer (Ruzzy::ASAN_PATH)."
        );
    }
    signals::prepare(runs_children);
    value_profile_gate::configure(value_profile);
    crate::findings::report::flush_findings_at_exit();
    if !hook::register() && libafl {
        blind_map::register(engine);
    }

    let replay: Vec<String> = if libafl {
        args.funcall("replay_files", ())?
    } else {
        Vec::new()
    };
    if !replay.is_empty() {
        target_state::set_driver_running(true);
        let status = replay_files(&replay);
        target_state::set_driver_running(false);
        return Ok(i64::from(status));
    }

    let mut argc = argv.len() as c_int;
    let mut pointers: Vec<*mut c_char> = argv.into_iter().map(CString::into_raw).collect();
    pointers.push(std::ptr::null_mut());
    let mut argv_ptr = pointers.leak().as_mut_ptr();
    target_state::set_driver_running(true);
    // SAFETY: argc/argv describe NUL-terminated strings that live forever
    // (leaked above); the callback has the signature libFuzzer expects. We
    // hold the GVL, and the callback runs on this same thread.
    let status = unsafe { (engine.run_driver)(&mut argc, &mut argv_ptr, callback::test_one_input) };
    target_state::set_driver_running(false);
    Ok(i64::from(status))
}

/// Runs the target once on each file, as libFuzzer does when given only
/// files. LibAFL's runtime would run them through a weak
/// `LLVMFuzzerTestOneInput` rather than the callback, so ruzzy does it.
/// Returns 0 (a finding ends the process first), 1 when a file cannot be
/// read.
fn replay_files(paths: &[String]) -> c_int {
    for path in paths {
        let _ = writeln!(std::io::stderr(), "Running: {path}");
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "ERROR: ruzzy: cannot read {path}: {error}"
                );
                return 1;
            }
        };
        let started = std::time::Instant::now();
        // SAFETY: the bytes live until the call returns; the callback runs on
        // this thread, which holds the GVL.
        unsafe { callback::test_one_input(bytes.as_ptr(), bytes.len()) };
        let millis = started.elapsed().as_millis();
        let _ = writeln!(std::io::stderr(), "Executed {path} in {millis} ms");
    }
    let _ = writeln!(
        std::io::stderr(),
        "***\n*** NOTE: fuzzing was not performed, you have only\n***       executed the target code on a fixed set of inputs.\n***"
    );
    0
}

/// The arguments as C strings. `Ruzzy::LibFuzzerArgs.validate` has
/// checked them (with messages for users); this re-check only keeps a
/// direct call from handing libFuzzer a truncated argument.
fn c_strings(ruby: &Ruby, args: RArray) -> Result<Vec<CString>, Error> {
    let mut argv = Vec::with_capacity(args.len());
    for item in args {
        let string = RString::try_convert(item)?;
        // SAFETY: the bytes are copied at once, before any Ruby code runs.
        let bytes = unsafe { string.as_slice() }.to_vec();
        let c_string = CString::new(bytes).map_err(|_| {
            tagged(
                ruby,
                Tag::InvalidArguments,
                "libFuzzer's arguments contain a NUL byte".to_owned(),
            )
        })?;
        argv.push(c_string);
    }
    if argv.is_empty() {
        return Err(tagged(
            ruby,
            Tag::InvalidArguments,
            "libFuzzer's arguments need the program name first".to_owned(),
        ));
    }
    Ok(argv)
}

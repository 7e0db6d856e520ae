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
//! - the driver starts at most once per process (libFuzzer cannot run twice):
//!   `STARTED` is claimed before anything is wired, and given back in one
//!   place, [`fuzz`], when [`set_up_run`] refuses the run (custom mutators
//!   the engine cannot call, a typed target's schema that does not register,
//!   LibAFL that would not see ruzzy's coverage), so that a corrected call
//!   may start; once the process is prepared for the engine it stays claimed;
//! - argv strings are leaked on purpose: libFuzzer keeps pointers into them
//!   for the rest of the process;
//! - nothing here runs per input (see [`crate::engine::callback`]).

use crate::coverage::hook;
use crate::engine::{blind_map, callback, signals, value_profile_gate};
use crate::error::{tagged, Tag};
use crate::input::{custom_mutator, structured};
use crate::process::libfuzzer::{self, Engine};
use crate::process::target_state;
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
    let flags = Flags::read(ruby, args)?;
    crate::ruby_classes::check(ruby)?;
    claim_start(ruby)?;
    let engine = libfuzzer::get();
    let mutators = Mutators {
        mutator,
        crossover,
        schema,
    };
    if let Err(refused) = set_up_run(ruby, engine, target, ignoring, &mutators, flags.timeout) {
        // The one place the claim is given back: the engine was not
        // started, nor the process prepared for it.
        STARTED.store(false, Ordering::SeqCst);
        return Err(refused);
    }
    prepare_process(engine, flags.runs_children, flags.value_profile);
    run_engine(engine, args, flags.argv)
}

/// Claims the process's one start (`STARTED`), or refuses a second one.
fn claim_start(ruby: &Ruby) -> Result<(), Error> {
    if STARTED.swap(true, Ordering::SeqCst) {
        return Err(tagged(
            ruby,
            Tag::AlreadyFuzzing,
            "Ruzzy.fuzz was already called in this process; libFuzzer can run only once per process"
                .to_owned(),
        ));
    }
    Ok(())
}

/// libFuzzer's flags, as `Ruzzy::LibFuzzerArgs` read them.
struct Flags {
    /// The argument list, program name first.
    argv: Vec<CString>,
    /// `-timeout` in seconds (0: none).
    timeout: u64,
    /// `-jobs`/`-workers`: libFuzzer runs children instead of fuzzing here.
    runs_children: bool,
    /// `-use_value_profile=1`.
    value_profile: bool,
}

impl Flags {
    /// Asks `args` (a `Ruzzy::LibFuzzerArgs`) for each, in this order.
    fn read(ruby: &Ruby, args: Value) -> Result<Self, Error> {
        Ok(Self {
            argv: c_strings(ruby, args.funcall("to_a", ())?)?,
            timeout: args.funcall("timeout", ())?,
            runs_children: args.funcall("runs_children?", ())?,
            value_profile: args.funcall("value_profile?", ())?,
        })
    }
}

/// The harness's custom mutator and crossover (nil: none) and its typed
/// target's schema (nil: a byte target). Held on the stack only.
struct Mutators {
    mutator: Value,
    crossover: Value,
    schema: Value,
}

/// Wires what runs per input (the mutators, the target, the timeout
/// state), prints the engine's `INFO:` lines, and refuses a run the engine
/// could not do. Its error is a refused start: [`fuzz`] gives the claim on
/// the process back.
fn set_up_run(
    ruby: &Ruby,
    engine: &Engine,
    target: Value,
    ignoring: bool,
    mutators: &Mutators,
    timeout: u64,
) -> Result<(), Error> {
    register_mutators(ruby, engine, mutators)?;
    callback::install_target(target.as_raw(), ignoring);
    target_state::configure(timeout);
    announce(engine, timeout);
    check_libafl_sees_coverage(ruby, engine)
}

/// Hands the custom mutator and crossover, or else the structure-aware
/// mutator of a typed target, to the engine; refuses custom ones an engine
/// without custom mutator hooks would never call (a preloaded libFuzzer
/// ruzzy did not build, LibAFL's runtime), and says when a typed target's
/// inputs are mutated as bytes for the same reason.
fn register_mutators(ruby: &Ruby, engine: &Engine, mutators: &Mutators) -> Result<(), Error> {
    let Mutators {
        mutator,
        crossover,
        schema,
    } = *mutators;
    let preloaded = matches!(engine.origin, libfuzzer::Origin::Preloaded { .. });
    let hooks = !preloaded || custom_mutator::preload_takes_mutators();
    let libafl = engine.is_libafl();
    if !hooks {
        if !mutator.is_nil() || !crossover.is_nil() {
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
        structured::register(ruby, schema)?;
    }
    custom_mutator::register(mutator.as_raw(), crossover.as_raw(), engine.mutate);
    if preloaded && hooks {
        custom_mutator::hand_to_preload();
    }
    Ok(())
}

/// The `INFO:` lines: which libFuzzer runs, and the per-input timeout.
fn announce(engine: &Engine, timeout: u64) {
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
}

/// Refuses LibAFL's runtime when ruzzy's coverage would register in
/// another library than the one that runs the driver: it would stop with
/// "No maps available".
fn check_libafl_sees_coverage(ruby: &Ruby, engine: &Engine) -> Result<(), Error> {
    match &engine.mismatch {
        Some(mismatch) if engine.is_libafl() => Err(tagged(
            ruby,
            Tag::EngineUnavailable,
            format!(
                "LibAFL's runtime would not see ruzzy's coverage: {mismatch}. Preload LibAFL's \
                 runtime in front of any other fuzzing or sanitizer library (ruzzy --engine=libafl \
                 arranges it, --sanitizer=address included)"
            ),
        )),
        _ => Ok(()),
    }
}

/// Prepares the process for the engine, once the run is accepted: UBSan's
/// reports under LibAFL, a warning when coverage would be invisible, the
/// signal handlers, the value-profile gate, the findings' flush at exit,
/// and the coverage map (a one-counter one for LibAFL when Ruby's
/// coverage is off).
fn prepare_process(engine: &Engine, runs_children: bool, value_profile: bool) {
    let libafl = engine.is_libafl();
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
}

/// Runs the engine: under LibAFL, the files given alone are replayed by
/// ruzzy ([`replay_files`]); else libFuzzer's driver takes over. Returns
/// the status when either returns.
fn run_engine(engine: &Engine, args: Value, argv: Vec<CString>) -> Result<i64, Error> {
    let replay: Vec<String> = if engine.is_libafl() {
        args.funcall("replay_files", ())?
    } else {
        Vec::new()
    };
    target_state::set_driver_running(true);
    let status = if replay.is_empty() {
        run_driver(engine, argv)
    } else {
        replay_files(&replay)
    };
    target_state::set_driver_running(false);
    Ok(i64::from(status))
}

/// Calls the chosen libFuzzer's `LLVMFuzzerRunDriver` with `argv`, leaked:
/// libFuzzer keeps pointers into it for the rest of the process.
fn run_driver(engine: &Engine, argv: Vec<CString>) -> c_int {
    let mut argc = argv.len() as c_int;
    let mut pointers: Vec<*mut c_char> = argv.into_iter().map(CString::into_raw).collect();
    pointers.push(std::ptr::null_mut());
    let mut argv_ptr = pointers.leak().as_mut_ptr();
    // SAFETY: argc/argv describe NUL-terminated strings that live forever
    // (leaked above); the callback has the signature libFuzzer expects. We
    // hold the GVL, and the callback runs on this same thread.
    unsafe { (engine.run_driver)(&mut argc, &mut argv_ptr, callback::test_one_input) }
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

//! `Ruzzy._fuzz(target, args)`: hands control to libFuzzer, exactly once.
//!
//! The Ruby method in front (`Ruzzy.fuzz`) owns defaults, validation and
//! documentation; this function re-checks what memory safety depends on
//! (argument types, NUL bytes) and raises `Ruzzy::*Error` otherwise.
//!
//! Invariants:
//! - the driver starts at most once per process (libFuzzer cannot run twice);
//! - argv strings are leaked on purpose: libFuzzer keeps pointers into them
//!   for the rest of the process;
//! - nothing here runs per input (see [`crate::callback`]).

use crate::ruzzy_error::{tagged, tagged_as};
use crate::{callback, coverage_hook, custom_mutator, engine, signals, target_state};
use magnus::{rb_sys::AsRawValue, value::ReprValue, Error, RArray, RString, Ruby, Value};
use std::ffi::{c_char, c_int, CString};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STARTED: AtomicBool = AtomicBool::new(false);

/// `Ruzzy._engine`: the `INFO:` line naming the libFuzzer that will run.
pub fn engine_description() -> String {
    engine::get().describe()
}

/// `Ruzzy._fuzz(target, args)`. Returns libFuzzer's status in the rare
/// cases where the driver returns (for example `-help=1`).
pub fn fuzz(
    ruby: &Ruby,
    target: Value,
    args: RArray,
    ignoring: bool,
    mutator: Value,
    crossover: Value,
) -> Result<i64, Error> {
    if !target.respond_to("call", true)? {
        return Err(tagged(
            ruby,
            "InvalidTargetError",
            format!(
                "the fuzz target must respond to #call, got {}",
                target.inspect()
            ),
        ));
    }
    let argv = c_strings(ruby, args)?;
    if STARTED.swap(true, Ordering::SeqCst) {
        return Err(tagged(
            ruby,
            "AlreadyFuzzingError",
            "Ruzzy.fuzz was already called in this process; libFuzzer can run only once per process"
                .to_owned(),
        ));
    }

    let engine = engine::get();
    let customised = !mutator.is_nil() || !crossover.is_nil();
    if customised && matches!(engine.origin, engine::Origin::Preloaded { .. }) {
        STARTED.store(false, Ordering::SeqCst);
        return Err(tagged(
            ruby,
            "InvalidArgumentsError",
            "custom mutators and crossover need ruzzy's bundled libFuzzer; they are not supported \
             with a preloaded libFuzzer (a sanitizer preload)"
                .to_owned(),
        ));
    }
    custom_mutator::register(mutator.as_raw(), crossover.as_raw());
    callback::install_target(target.as_raw(), ignoring);
    let timeout = timeout_secs(&argv);
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
    if let Some(mismatch) = &engine.mismatch {
        let _ = writeln!(
            std::io::stderr(),
            "WARNING: ruzzy: {mismatch}; coverage registered there is invisible to the fuzzer. \
             Preload one library that carries both libFuzzer and the sanitizer (Ruzzy::ASAN_PATH)."
        );
    }
    signals::prepare(runs_children(&argv));
    coverage_hook::register();

    let mut argc = argv.len() as c_int;
    let mut pointers: Vec<*mut c_char> = argv.into_iter().map(CString::into_raw).collect();
    pointers.push(std::ptr::null_mut());
    let mut argv_ptr = pointers.leak().as_mut_ptr();
    // SAFETY: argc/argv describe NUL-terminated strings that live forever
    // (leaked above); the callback has the signature libFuzzer expects. We
    // hold the GVL, and the callback runs on this same thread.
    let status = unsafe { (engine.run_driver)(&mut argc, &mut argv_ptr, callback::test_one_input) };
    Ok(i64::from(status))
}

/// Whether libFuzzer will run child processes instead of the target.
fn runs_children(argv: &[CString]) -> bool {
    const PARENT_FLAGS: [&str; 6] = [
        "-fork=",
        "-jobs=",
        "-workers=",
        "-merge=",
        "-minimize_crash=",
        "-set_cover_merge=",
    ];
    argv.iter().filter_map(|arg| arg.to_str().ok()).any(|arg| {
        PARENT_FLAGS
            .iter()
            .any(|flag| arg.strip_prefix(flag).is_some_and(|value| value != "0"))
    })
}

/// libFuzzer's `-timeout` in seconds (its default is 1200; 0 disables).
fn timeout_secs(argv: &[CString]) -> u64 {
    argv.iter()
        .filter_map(|arg| {
            arg.to_str()
                .ok()?
                .strip_prefix("-timeout=")?
                .parse::<u64>()
                .ok()
        })
        .next_back()
        .unwrap_or(1200)
}

fn c_strings(ruby: &Ruby, args: RArray) -> Result<Vec<CString>, Error> {
    if args.is_empty() {
        return Err(tagged_as(
            ruby,
            "InvalidArgumentsError",
            "args must not be empty: its first element is the program name".to_owned(),
            ruby.exception_runtime_error(),
        ));
    }
    let mut argv = Vec::with_capacity(args.len());
    for (index, item) in args.into_iter().enumerate() {
        let Some(string) = RString::from_value(item) else {
            return Err(tagged_as(
                ruby,
                "InvalidArgumentsError",
                format!("args[{index}] must be a String, got {}", item.inspect()),
                ruby.exception_type_error(),
            ));
        };
        // SAFETY: the bytes are copied at once, before any Ruby code runs.
        let bytes = unsafe { string.as_slice() }.to_vec();
        match CString::new(bytes) {
            Ok(c_string) => argv.push(c_string),
            Err(_) => {
                return Err(tagged(
                    ruby,
                    "InvalidArgumentsError",
                    format!("args[{index}] contains a NUL byte"),
                ))
            }
        }
    }
    Ok(argv)
}

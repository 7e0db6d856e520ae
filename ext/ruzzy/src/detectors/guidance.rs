//! Comparison feedback that steers inputs towards the detectors' canaries
//! (`Ruzzy::Native._guide_towards`, `Ruzzy::Native._guide_equal`), as Jazzer's
//! `guideTowardsContainment` and `guideTowardsEquality` do: a sink that got
//! a String reports it against the canary forms that would make it a
//! finding, and libFuzzer inserts them into new inputs. Each form goes both
//! to libFuzzer's memmem table (1,024 slots, shared with every substring
//! search) and to its table of recent byte comparisons (32 slots, which
//! its mutations draw from far more often). A form a typed input's pool
//! holds is also a wanted value (`feedback::wanted`): the structure-aware
//! mutator sets a pool choice to it.
//!
//! Code given to `eval`, `instance_eval`, `class_eval`, `module_eval` and
//! `Binding#eval` is compared with the code-injection canary's forms by
//! native hooks (`Ruzzy::Detectors::*EvalHooks`), which then call `super`
//! with the same arguments and block from a C frame: eval still sees its
//! caller's binding (Ruby skips C frames to find it), which a Ruby hook
//! would change.
//!
//! Invariants: called by detector hooks (Ruby methods of ruzzy's own, so at
//! the unknown comparison site) with the GVL held; allocates nothing;
//! anything but Strings is ignored; the eval hooks' only Ruby call is the
//! final `super`.

use crate::feedback::compare_sites::{self, SiteId};
use crate::feedback::wanted;
use crate::rb;
use crate::rb::method::{self, Function, Visibility};
use crate::rb::value::{Frame, MethodCall};
use magnus::rb_sys::{AsRawValue, FromRawValue};
use magnus::{prelude::*, Error, RArray, RModule, Value};
use rb_sys::VALUE;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The forms code is compared with (an Array of Strings), nil until
/// `Ruzzy::Native._guide_code` sets them.
static CODE_WORDS: AtomicUsize = AtomicUsize::new(rb::QNIL as usize);

/// Reports a search for each String of `needles` in `value`, and a
/// comparison of `value` with it.
pub fn guide_towards(value: Value, needles: RArray) {
    // SAFETY: called by the interpreter as a function; no Ruby code runs.
    let frame = unsafe { Frame::enter() };
    if let Some(haystack) = frame.string_bytes(value.as_raw()) {
        towards(&frame, haystack, needles);
    }
}

fn towards(frame: &Frame, haystack: &[u8], needles: RArray) {
    for index in 0..needles.len() {
        let Ok(needle) = needles.entry::<Value>(index as isize) else {
            continue;
        };
        if let Some(needle) = frame.string_bytes(needle.as_raw()) {
            compare_sites::substring(SiteId::UNKNOWN, haystack, needle);
            compare_sites::bytes(SiteId::UNKNOWN, haystack, needle);
            wanted::record(needle);
        }
    }
}

/// `Ruzzy::Native._guide_code(words)`: the forms code given to the eval hooks is
/// compared with (a frozen Array of Strings, kept for the process).
pub fn guide_code(words: RArray) {
    if CODE_WORDS.swap(words.as_raw() as usize, Ordering::Relaxed) as VALUE == rb::QNIL {
        // Registered once: a second call only replaces the value.
        rb::register_gc_root(&CODE_WORDS);
    }
}

/// The eval hooks: compares the code (a String first argument) with the
/// canary forms, then calls the original.
unsafe extern "C" fn eval_code(argc: c_int, argv: *const VALUE, _this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let words = CODE_WORDS.load(Ordering::Relaxed) as VALUE;
    if let (Some(code), Some(words)) = (
        call.string_bytes(call.first()),
        // SAFETY: the registered Array set by guide_code, or nil.
        RArray::from_value(unsafe { Value::from_raw(words) }),
    ) {
        towards(&call, code, words);
    }
    call.call_super()
}

/// Defines the eval hook modules under `Ruzzy::Detectors`.
pub fn define(ruzzy: RModule) -> Result<(), Error> {
    let detectors = ruzzy.define_module("Detectors")?;
    let hooks: [(&str, &[&std::ffi::CStr], Visibility); 4] = [
        ("KernelEvalHooks", &[c"eval"], Visibility::Private),
        ("ObjectEvalHooks", &[c"instance_eval"], Visibility::Public),
        (
            "ModuleEvalHooks",
            &[c"class_eval", c"module_eval"],
            Visibility::Public,
        ),
        ("BindingEvalHooks", &[c"eval"], Visibility::Public),
    ];
    for (module, names, visibility) in hooks {
        let module = detectors.define_module(module)?;
        for name in names {
            method::define(module, name, Function::Var(eval_code), visibility)?;
        }
    }
    Ok(())
}

/// Reports a comparison of the start of `value` with `expected`.
pub fn guide_equal(value: Value, expected: Value) {
    // SAFETY: called by the interpreter as a function; no Ruby code runs.
    let frame = unsafe { Frame::enter() };
    let (Some(value), Some(expected)) = (
        frame.string_bytes(value.as_raw()),
        frame.string_bytes(expected.as_raw()),
    ) else {
        return;
    };
    let start = &value[..value.len().min(expected.len())];
    compare_sites::bytes(SiteId::UNKNOWN, start, expected);
    wanted::record(expected);
}

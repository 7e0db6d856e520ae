//! Keeps an input the callback rejects out of the corpus, under any
//! libFuzzer.
//!
//! The callback returns -1 for an input that must never enter the corpus:
//! the target returned -1 (or another Integer), or it raised in a campaign
//! (`--keep-going`), where the finding is filed and fuzzing goes on.
//! libFuzzer honours -1 from LLVM 15 on (the copy bundled in this extension
//! does, and so does LibAFL's runtime), but clang 14's, which the sanitizer
//! preloads are built from on Debian 12 and Ubuntu 22.04, ignores it and
//! keeps any input with new coverage: under `--sanitizer=address` a
//! campaign's corpus filled with inputs that raise. Under a preloaded
//! libFuzzer, whose version ruzzy cannot know, [`forget_input`] therefore
//! also takes back what the input covered before -1 is returned, leaving
//! what every input covers, so that libFuzzer finds nothing new to keep it
//! for:
//! - ruzzy's map of Ruby coverage, cleared and counted as at the start of
//!   an input ([`crate::coverage::hook::before_input`]);
//! - the 8-bit counters of every instrumented shared object (the C
//!   extensions, [`module_counters`]);
//! - the stack depth ([`stack_depth`]).
//!
//! libFuzzer's value profile (`-use_value_profile=1`) is its own and cannot
//! be taken back: with an older libFuzzer and that flag, a rejected input
//! can still enter the corpus by a comparison value never seen before.
//!
//! Invariant: called by the callback on the fuzzing thread, last before it
//! returns -1 (nothing may count coverage after it).

use crate::coverage::hook;
use crate::engine::{module_counters, stack_depth};
use crate::process::libfuzzer::{self, Kind, Origin};
use std::sync::OnceLock;

/// Whether the engine may ignore -1: a preloaded libFuzzer.
fn engine_may_ignore_rejection() -> bool {
    static MAY_IGNORE: OnceLock<bool> = OnceLock::new();
    *MAY_IGNORE.get_or_init(|| {
        let engine = libfuzzer::get();
        engine.kind == Kind::LibFuzzer && matches!(engine.origin, Origin::Preloaded { .. })
    })
}

/// Makes sure the input the callback is about to reject adds nothing to
/// the corpus; returns the callback's result for it, -1.
pub fn forget_input() -> std::ffi::c_int {
    if engine_may_ignore_rejection() {
        hook::clear_counters();
        hook::before_input();
        module_counters::clear();
        stack_depth::forget();
    }
    -1
}

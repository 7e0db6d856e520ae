//! Native core of ruzzy, loaded by `lib/ruzzy.rb` as `ruzzy/ruzzy_ext`.
//!
//! This file only wires modules to Ruby. Each module owns one job:
//! - [`engine`]: which libFuzzer runs (a preloaded one or the bundled copy);
//! - [`driver`]: `Ruzzy._fuzz`, hands control to libFuzzer exactly once;
//! - [`callback`]: the per-input callback libFuzzer calls;
//! - [`finding`]: reporting a finding before libFuzzer writes the artifact;
//! - [`signals`]: giving libFuzzer the signals Ruby took at start-up.
//!
//! Invariant: every `#[magnus::init]` definition propagates its error with `?`,
//! so a broken binding raises at `require`, never later.

// libFuzzer's static archive is only linked when something names the crate.
use libfuzzer_sys as _;

mod callback;
mod driver;
mod engine;
mod finding;
mod rb;
mod signals;

use magnus::{function, Error, Ruby};

/// libfuzzer-sys exports `LLVMFuzzerTestOneInput`, which calls this symbol.
/// ruzzy never uses that entry point (it passes its own callback to
/// `LLVMFuzzerRunDriver`), but the symbol must exist for `require` to work.
#[allow(improper_ctypes_definitions)]
#[no_mangle]
pub extern "C" fn rust_fuzzer_test_input(_input: &[u8]) -> i32 {
    0
}

#[magnus::init(name = "ruzzy_ext")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let ruzzy = ruby.define_module("Ruzzy")?;
    ruzzy.define_module_function("_fuzz", function!(driver::fuzz, 2))?;
    ruzzy.define_module_function("_engine", function!(driver::engine_description, 0))?;
    Ok(())
}

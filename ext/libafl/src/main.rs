//! Writes the runtime of LibAFL's libFuzzer-compatible engine
//! (`libafl_libfuzzer`, its symbols renamed so that its Rust standard library
//! never clashes with another one in the same process) to the file named by
//! the first argument, as a static archive. `ext/ruzzy/build_libafl.rb` links
//! that archive into the shared object `ruzzy --engine=libafl` preloads.
//!
//! Invariant: this program never links the runtime itself; it only carries its
//! bytes.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: ruzzy-libafl-runtime ARCHIVE");
        return ExitCode::from(2);
    };
    match std::fs::write(&path, libafl_libfuzzer::LIBAFL_LIBFUZZER_RUNTIME_LIBRARY) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "ruzzy-libafl-runtime: cannot write {}: {error}",
                path.to_string_lossy()
            );
            ExitCode::FAILURE
        }
    }
}

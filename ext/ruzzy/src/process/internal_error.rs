//! What happens when ruzzy's own native code panics.
//!
//! A panic is a bug in ruzzy, never in the fuzz target. Left alone it would
//! abort the process (a panic cannot unwind out of an `extern "C"`
//! function: a coverage or comparison hook, libFuzzer's callback, a signal
//! handler), and libFuzzer would save the input as a crash of the target: a
//! false finding. So [`install`] replaces the panic hook, for every entry
//! point at once: it reports the panic as an internal error and ends the
//! process with `Ruzzy::EXIT_INTERNAL_ERROR` through `_exit`, before any
//! unwinding and without running libFuzzer's crash or exit handlers, so no
//! crash file is written.
//!
//! Test hook: `RUZZY_INJECT_PANIC=coverage` installs a coverage hook that
//! panics on its first event inside an input (read once, when coverage
//! starts; the ordinary hooks carry no check).
//!
//! Invariant: installed once, at `require`; the report allocates (it runs
//! only when the process is about to end).

use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};

/// `Ruzzy::EXIT_INTERNAL_ERROR` (`lib/ruzzy/exit_status.rb`), read when the
/// extension loads.
static EXIT_INTERNAL_ERROR: AtomicI32 = AtomicI32::new(3);

/// Takes the exit status from `Ruzzy` and installs the panic hook.
pub fn install(ruzzy: magnus::RModule) -> Result<(), magnus::Error> {
    use magnus::Module;
    EXIT_INTERNAL_ERROR.store(ruzzy.const_get("EXIT_INTERNAL_ERROR")?, Ordering::Relaxed);
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        let location = info
            .location()
            .map(|at| format!(" at {}:{}", at.file(), at.line()))
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "==ruzzy== ERROR: internal error in ruzzy's native code (a Rust panic{location}: {message}).\n\
             ==ruzzy== This is a bug in ruzzy, not a finding in the fuzz target: no crash file was \
             written. Please report it with this message and the command that was running."
        );
        // SAFETY: _exit ends the process at once; it skips libFuzzer's
        // handlers, which would report the panic as the target's crash.
        unsafe { libc::_exit(EXIT_INTERNAL_ERROR.load(Ordering::Relaxed)) }
    }));
    Ok(())
}

/// Whether the test hook asks for panics at `site`.
pub fn panic_injected_at(site: &str) -> bool {
    std::env::var("RUZZY_INJECT_PANIC").is_ok_and(|value| value == site)
}

//! Hands libFuzzer the signals Ruby took at start-up.
//!
//! Ruby installs handlers for SIGINT, SIGTERM, SIGALRM, SIGUSR1 and SIGUSR2.
//! libFuzzer leaves an existing handler in place, so without this step
//! Ctrl-C would become a Ruby `Interrupt` raised inside the target (reported
//! as a finding) and libFuzzer's `-timeout` alarm a Ruby `SignalException`.
//! Resetting them to the default just before the driver starts lets
//! libFuzzer install its own: Ctrl-C prints the final stats and exits.
//!
//! Invariant: called once, right before `LLVMFuzzerRunDriver`; the Ruby
//! handlers are not restored (the driver never gives control back).

const HANDED_TO_LIBFUZZER: [libc::c_int; 5] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGALRM,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

pub fn hand_to_libfuzzer() {
    for signal in HANDED_TO_LIBFUZZER {
        // SAFETY: resetting a catchable signal to SIG_DFL is always valid.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
}

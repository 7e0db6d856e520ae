//! What the fuzz target is doing right now (which input runs, since when,
//! on which thread, and libFuzzer's `-timeout`), for code that runs in
//! signal handlers (crashes, timeouts) and must decide whether printing the
//! Ruby backtrace makes sense, and whether this process's one report was
//! made already.
//!
//! Invariants: only atomics and `clock_gettime` (async-signal-safe); the
//! per-input cost is five relaxed stores and two clock reads (vDSO).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

static IN_TARGET: AtomicBool = AtomicBool::new(false);
static REPORTED: AtomicBool = AtomicBool::new(false);
static REPORTING_TIMEOUT: AtomicBool = AtomicBool::new(false);
static DRIVER_RUNNING: AtomicBool = AtomicBool::new(false);
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static TIMEOUT_SECS: AtomicU64 = AtomicU64::new(0);
static FUZZING_THREAD: AtomicUsize = AtomicUsize::new(0);
static INPUT_DATA: AtomicUsize = AtomicUsize::new(0);
static INPUT_SIZE: AtomicUsize = AtomicUsize::new(0);
static FUZZ_FRAME: AtomicUsize = AtomicUsize::new(0);

/// The monotonic clock, in ns. Async-signal-safe.
pub fn now_ns() -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes `time`; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut time) };
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

fn current_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// CPU time the thread that runs the target has used, in ns (None before
/// [`configure`], or when the system cannot say): unlike a wall clock, it
/// does not grow while other processes have the cores.
pub fn fuzzing_thread_cpu_ns() -> Option<u64> {
    let thread = FUZZING_THREAD.load(Ordering::Relaxed);
    if thread == 0 {
        return None;
    }
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `thread` is the pthread_t of the thread that called `_fuzz`,
    // which lives as long as the process runs the target; the call only
    // writes `clock`.
    if unsafe { libc::pthread_getcpuclockid(thread as libc::pthread_t, &mut clock) } != 0 {
        return None;
    }
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes `time`.
    if unsafe { libc::clock_gettime(clock, &mut time) } != 0 {
        return None;
    }
    Some(time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64)
}

/// libFuzzer's `-timeout` in seconds.
pub fn timeout_secs() -> u64 {
    TIMEOUT_SECS.load(Ordering::Relaxed)
}

/// Records the thread that runs the target, libFuzzer's `-timeout`, and
/// the interpreter's frame of `Ruzzy::Native._fuzz` (called from it, with
/// the GVL held): the frames below it are the harness's start-up.
pub fn configure(timeout_secs: u64) {
    TIMEOUT_SECS.store(timeout_secs, Ordering::Relaxed);
    FUZZING_THREAD.store(current_thread(), Ordering::Relaxed);
    // SAFETY: on the Ruby thread that called `_fuzz`, holding the GVL.
    let frame = unsafe { crate::rb::interpreter_layout::current_frame() };
    FUZZ_FRAME.store(frame, Ordering::Relaxed);
}

/// Test only: records the `-timeout` and the calling thread, as
/// [`configure`] does without the interpreter.
#[cfg(test)]
pub(crate) fn configure_for_tests(timeout_secs: u64) {
    TIMEOUT_SECS.store(timeout_secs, Ordering::Relaxed);
    FUZZING_THREAD.store(current_thread(), Ordering::Relaxed);
}

/// Test only: everything as before [`configure`] (see
/// [`crate::process::reset_for_tests`]).
#[cfg(test)]
pub(super) fn reset_for_tests() {
    for flag in [&IN_TARGET, &REPORTED, &REPORTING_TIMEOUT, &DRIVER_RUNNING] {
        flag.store(false, Ordering::Relaxed);
    }
    for number in [&STARTED_NS, &TIMEOUT_SECS] {
        number.store(0, Ordering::Relaxed);
    }
    for word in [&FUZZING_THREAD, &INPUT_DATA, &INPUT_SIZE, &FUZZ_FRAME] {
        word.store(0, Ordering::Relaxed);
    }
}

/// The interpreter's frame of `Ruzzy::Native._fuzz` (a
/// [`crate::rb::interpreter_layout::StackFrame::cfp`] address), 0 when unknown: the target's
/// frames sit below it on the VM stack, the harness's start-up (the
/// `ruzzy` command, `Ruzzy.fuzz`) at or above it.
pub fn fuzz_frame() -> usize {
    FUZZ_FRAME.load(Ordering::Relaxed)
}

/// Before each run of the target (the engine's lifecycle): the target
/// starts running `size` bytes at `data` (libFuzzer's input, valid until
/// the target returns). Its clock starts here.
#[inline(always)]
pub fn before_input(data: *const u8, size: usize) {
    INPUT_DATA.store(data as usize, Ordering::Relaxed);
    INPUT_SIZE.store(size, Ordering::Relaxed);
    STARTED_NS.store(now_ns(), Ordering::Relaxed);
    IN_TARGET.store(true, Ordering::Relaxed);
}

/// After each run of the target (the engine's lifecycle): the target
/// returned (or raised); returns how long it ran, in ns.
#[inline(always)]
pub fn after_input() -> u64 {
    IN_TARGET.store(false, Ordering::Relaxed);
    now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed))
}

/// The input the target is running on this thread, if it is.
pub fn current_input() -> Option<&'static [u8]> {
    if !running_here() {
        return None;
    }
    input_in_progress()
}

/// The input the target is running, seen from any thread (libFuzzer's
/// memory watcher reports from its own).
pub fn input_in_progress() -> Option<&'static [u8]> {
    if !IN_TARGET.load(Ordering::Relaxed) {
        return None;
    }
    let data = INPUT_DATA.load(Ordering::Relaxed) as *const u8;
    let size = INPUT_SIZE.load(Ordering::Relaxed);
    if data.is_null() {
        return Some(&[]);
    }
    // SAFETY: libFuzzer's input stays valid while the target runs it, and
    // the caller (a crash report) reads it before the process ends.
    Some(unsafe { std::slice::from_raw_parts(data, size) })
}

/// Marks the finding as described by ruzzy; later crash paths (libFuzzer
/// printing a stack trace) then print nothing more.
pub fn mark_reported() {
    REPORTED.store(true, Ordering::Relaxed);
}

/// Undoes [`mark_reported`]: the finding was recorded and fuzzing goes on.
pub fn clear_reported() {
    REPORTED.store(false, Ordering::Relaxed);
}

/// libFuzzer's driver starts (true) or has returned (false).
pub fn set_driver_running(running: bool) {
    DRIVER_RUNNING.store(running, Ordering::Relaxed);
}

/// Whether libFuzzer's driver is running and this is the fuzzing thread.
pub fn driver_running_here() -> bool {
    DRIVER_RUNNING.load(Ordering::Relaxed)
        && FUZZING_THREAD.load(Ordering::Relaxed) == current_thread()
}

/// `Ruzzy::Native._overdue_input(seconds)`: when the target has been
/// running the current input for at least `seconds`, the input's start
/// time (ns, which tells inputs apart); else nil. A campaign's hang watch
/// asks, holding the GVL, while the target waits for it.
pub fn overdue_input(seconds: f64) -> Option<u64> {
    let started = STARTED_NS.load(Ordering::Relaxed);
    let elapsed = now_ns().saturating_sub(started);
    (IN_TARGET.load(Ordering::Relaxed) && elapsed as f64 >= seconds * 1e9).then_some(started)
}

/// How many whole seconds the current input has run.
pub fn running_secs() -> u64 {
    now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed)) / 1_000_000_000
}

/// The timeout alarm is handed to libFuzzer for an input that ran past
/// `-timeout`: the report it makes now is a timeout (`timeout-<sha1>`).
pub fn mark_reporting_timeout() {
    REPORTING_TIMEOUT.store(true, Ordering::Relaxed);
}

/// Whether libFuzzer is reporting a timeout ([`mark_reporting_timeout`]);
/// any other report of libFuzzer's is a crash, however long the input ran
/// (a sanitizer's report, symbolized, can take seconds).
pub fn reporting_timeout() -> bool {
    REPORTING_TIMEOUT.load(Ordering::Relaxed)
}

/// Whether the current input has run for at least libFuzzer's `-timeout`.
pub fn timed_out() -> bool {
    let timeout = TIMEOUT_SECS.load(Ordering::Relaxed);
    let elapsed = now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed));
    // libFuzzer counts whole seconds of its own clock: allow for rounding.
    timeout > 0 && elapsed + 50_000_000 >= timeout * 1_000_000_000
}

/// The thread running the target, if it is inside the target right now.
pub fn fuzzing_thread_in_target() -> Option<libc::pthread_t> {
    let thread = FUZZING_THREAD.load(Ordering::Relaxed);
    (IN_TARGET.load(Ordering::Relaxed) && thread != 0).then_some(thread as libc::pthread_t)
}

/// Whether the target is running on this thread right now.
pub fn running_here() -> bool {
    IN_TARGET.load(Ordering::Relaxed) && FUZZING_THREAD.load(Ordering::Relaxed) == current_thread()
}

/// Claims the one report of this process: true the first time only.
pub fn claim_report() -> bool {
    !REPORTED.swap(true, Ordering::Relaxed)
}

//! Signals between Ruby and libFuzzer.
//!
//! Ruby installs handlers for SIGINT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2,
//! SIGSEGV and SIGBUS at start-up, and libFuzzer leaves an existing handler
//! in place. Left alone, Ctrl-C would become a Ruby `Interrupt` inside the
//! target, libFuzzer's `-timeout` alarm a Ruby `SignalException`, and a
//! segfault Ruby's "[BUG]" report with no crash file.
//!
//! - Before the driver starts ([`prepare`]) the first five are reset to
//!   their defaults, and Ruby's SIGSEGV/SIGBUS handlers are set aside, so
//!   that libFuzzer installs its own handlers for all of them. A sanitizer
//!   runtime's handlers (not Ruby's) are left alone. In a process that only
//!   runs children (-fork, -jobs, -merge, -minimize_crash), Ruby's SIGCHLD
//!   and SIGVTALRM handlers get SA_RESTART, so that they do not cut short
//!   libFuzzer's reads of a child's output.
//! - On the first input ([`before_input`]) ruzzy wraps what
//!   libFuzzer installed:
//!   - SIGSEGV/SIGBUS: a fault on the stack pages (a machine stack
//!     overflow) still goes to Ruby, which raises `SystemStackError`;
//!     anything else goes to libFuzzer's crash handling (report, the Ruby
//!     backtrace, `crash-<sha1>`, `-error_exitcode`).
//!   - SIGALRM: when the input has run past `-timeout`, libFuzzer's
//!     timeout report waits for the Ruby backtrace of the target: Ruby
//!     prints it at its next safe point and the report follows; if the
//!     target does not come back to Ruby within a second, time spent
//!     waiting for a core not counted ([`crate::engine::timeout_grace`]; C
//!     code: a regular expression on Ruby 3.1, a C extension), the frames
//!     are read without Ruby's help (async-signal-safe) and the report
//!     follows.
//!     The alarm comes every second (libFuzzer's period is half the
//!     timeout), so a timeout is reported within a second of `-timeout`.
//!
//! Under LibAFL's runtime, whose handlers know nothing of Ruby, ruzzy takes
//! the faults over ([`crate::findings::fatal`] reports them in libFuzzer's
//! words): SIGSEGV/SIGBUS (stack overflows still go to Ruby), SIGABRT,
//! SIGILL and SIGFPE end in a crash report, and SIGALRM is ruzzy's alone
//! (its one-second check, and LibAFL's own timer, which ends in ruzzy's
//! timeout report), in fuzzing and when replaying files alike.
//!
//! Invariants: every handler here is async-signal-safe up to the point
//! where the process is about to die; handlers are installed once and
//! never removed.

use crate::engine::timeout_grace;
use crate::findings::ruby_backtrace;
use crate::process::target_state;
use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// How often the alarm checks whether the input has run past `-timeout`.
const TIMEOUT_CHECK_SECS: libc::time_t = 1;

/// The timeout report: not started, or waiting for Ruby's safe point.
const TIMEOUT_IDLE: u8 = 0;
const TIMEOUT_WAITING: u8 = 1;
static TIMEOUT_STATE: AtomicU8 = AtomicU8::new(TIMEOUT_IDLE);

const TIMEOUT_HEADLINE: &str =
    "==ruzzy== the fuzz target ran past -timeout; Ruby backtrace (innermost last):\n";
const TIMEOUT_RAW_HEADLINE: &str = "==ruzzy== the fuzz target ran past -timeout; Ruby backtrace \
(innermost last; read from the interpreter's frames, since the target did not come back to Ruby \
within a second, time spent waiting for a core not counted: it is inside C code):\n";

const HANDED_TO_LIBFUZZER: [libc::c_int; 5] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGALRM,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Signals whose Ruby handler is set aside; index into the tables below.
const DEADLY: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];
const ALARM: usize = 2;

/// A `sigaction` saved once, before any handler that reads it is installed.
struct Saved {
    action: UnsafeCell<libc::sigaction>,
    set: AtomicBool,
}

// SAFETY: written once (before the handler that reads it is installed,
// ordered by `set`), then only read.
unsafe impl Sync for Saved {}

impl Saved {
    const fn new() -> Saved {
        Saved {
            // SAFETY: an all-zero sigaction is a valid SIG_DFL action.
            action: UnsafeCell::new(unsafe { std::mem::zeroed() }),
            set: AtomicBool::new(false),
        }
    }

    fn store(&self, action: libc::sigaction) {
        // SAFETY: single writer, before `set` publishes it.
        unsafe { *self.action.get() = action };
        self.set.store(true, Ordering::Release);
    }

    fn get(&self) -> Option<&libc::sigaction> {
        // SAFETY: published by `store`, never written again.
        self.set
            .load(Ordering::Acquire)
            .then(|| unsafe { &*self.action.get() })
    }
}

static RUBY: [Saved; 2] = [Saved::new(), Saved::new()];
static LIBFUZZER: [Saved; 3] = [Saved::new(), Saved::new(), Saved::new()];
static ADOPTED: AtomicBool = AtomicBool::new(false);
/// Whether crashes and timeouts are ruzzy's to report
/// ([`crate::findings::fatal`]): under LibAFL's runtime.
static OWN_FAULTS: AtomicBool = AtomicBool::new(false);

/// Signals that end the process, taken under an engine whose faults are
/// ruzzy's (libFuzzer handles them itself: -handle_abrt and the like).
const FATAL_UNDER_OWN_FAULTS: [libc::c_int; 3] = [libc::SIGABRT, libc::SIGILL, libc::SIGFPE];

fn current(signal: libc::c_int) -> libc::sigaction {
    // SAFETY: querying a handler only writes `action`.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut action);
        action
    }
}

fn handler_address(action: &libc::sigaction) -> usize {
    action.sa_sigaction
}

fn is_ruby_handler(action: &libc::sigaction) -> bool {
    let address = handler_address(action);
    if address == libc::SIG_DFL || address == libc::SIG_IGN {
        return false;
    }
    crate::rb::dl::library_of(address as *mut c_void) == crate::rb::dl::libruby()
}

/// Called once, right before `LLVMFuzzerRunDriver`. `runs_children` says
/// whether libFuzzer will run child processes and read their output
/// (-fork, -jobs, -merge, -minimize_crash) rather than run the target.
pub fn prepare(runs_children: bool) {
    for signal in HANDED_TO_LIBFUZZER {
        // SAFETY: resetting a catchable signal to SIG_DFL is always valid.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
    if runs_children {
        restart_after(libc::SIGCHLD);
        restart_after(libc::SIGVTALRM);
    }
    for (index, signal) in DEADLY.into_iter().enumerate() {
        let action = current(signal);
        if is_ruby_handler(&action) {
            RUBY[index].store(action);
            // SAFETY: as above.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}

/// Adds SA_RESTART to `signal`'s handler. Ruby's SIGCHLD and SIGVTALRM
/// (thread timer) handlers lack it, so they interrupt libFuzzer's blocking
/// reads of a child's output: the output was cut short, and the child died
/// writing to the closed pipe. Only done when the process runs children,
/// not the target (Ruby relies on EINTR to interrupt blocked threads).
fn restart_after(signal: libc::c_int) {
    let mut action = current(signal);
    let address = handler_address(&action);
    if address != libc::SIG_DFL
        && address != libc::SIG_IGN
        && action.sa_flags & libc::SA_RESTART == 0
    {
        action.sa_flags |= libc::SA_RESTART;
        // SAFETY: re-installing the same handler with one more flag.
        unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) };
    }
}

/// Before every input ([`crate::engine::lifecycle`]): adopts libFuzzer's
/// handlers on the first one, when they are in place.
#[inline(always)]
pub fn before_input() {
    if !ADOPTED.load(Ordering::Relaxed) {
        adopt();
    }
}

#[cold]
fn adopt() {
    ADOPTED.store(true, Ordering::Relaxed);
    let own = crate::process::libfuzzer::get().is_libafl();
    OWN_FAULTS.store(own, Ordering::Relaxed);
    for (index, signal) in DEADLY.into_iter().enumerate() {
        if RUBY[index].get().is_some() || own {
            wrap(signal, index, on_deadly_signal, own);
        }
    }
    if own {
        for signal in FATAL_UNDER_OWN_FAULTS {
            take(signal, on_fatal_signal);
        }
    }
    wrap(libc::SIGALRM, ALARM, on_alarm, own);
    if own || LIBFUZZER[ALARM].get().is_some() {
        arm_timeout_timer();
    }
}

/// Installs `handler` for `signal` in front of the current (libFuzzer's)
/// handler, if there is one, or in any case with `always`.
fn wrap(
    signal: libc::c_int,
    index: usize,
    handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void),
    always: bool,
) {
    let existing = current(signal);
    let address = handler_address(&existing);
    if !always && (address == libc::SIG_DFL || address == libc::SIG_IGN) {
        return;
    }
    LIBFUZZER[index].store(existing);
    take(signal, handler);
}

/// Installs `handler` for `signal`.
fn take(
    signal: libc::c_int,
    handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void),
) {
    // SAFETY: a zeroed sigaction with an empty mask, our handler and
    // SA_SIGINFO|SA_ONSTACK (the alternate stack Ruby set up is needed to
    // handle a stack overflow) is valid to install.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_sigaction = handler as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// Runs a saved handler as the kernel would have.
fn forward(
    action: &libc::sigaction,
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut c_void,
) {
    let address = handler_address(action);
    // SAFETY: `address` is a handler that was installed for `signal`, with
    // the signature its flags say.
    unsafe {
        if address == libc::SIG_IGN {
        } else if address == libc::SIG_DFL {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        } else if action.sa_flags & libc::SA_SIGINFO != 0 {
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                std::mem::transmute(address);
            handler(signal, info, context);
        } else {
            let handler: extern "C" fn(libc::c_int) = std::mem::transmute(address);
            handler(signal);
        }
    }
}

extern "C" fn on_deadly_signal(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut c_void,
) {
    let index = DEADLY.iter().position(|&s| s == signal).unwrap_or(0);
    let ruby_handles_it = stack_overflow(info, context);
    if !ruby_handles_it && OWN_FAULTS.load(Ordering::Relaxed) {
        crate::findings::fatal::deadly_signal();
    }
    let saved = if ruby_handles_it {
        &RUBY[index]
    } else {
        &LIBFUZZER[index]
    };
    match saved.get() {
        Some(action) => forward(action, signal, info, context),
        None => {
            // SAFETY: falling back to the default action ends the process.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
        }
    }
}

/// SIGABRT, SIGILL or SIGFPE under an engine that leaves faults to ruzzy.
extern "C" fn on_fatal_signal(
    _signal: libc::c_int,
    _info: *mut libc::siginfo_t,
    _context: *mut c_void,
) {
    crate::findings::fatal::deadly_signal();
}

extern "C" fn on_alarm(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: errno is the calling thread's; the grace's reads may set it,
    // and the interrupted code must find it as it was.
    let errno = unsafe { *libc::__errno_location() };
    on_timeout_alarm(signal, info, context);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

fn on_timeout_alarm(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    if target_state::timed_out() && target_state::running_here() {
        let state = TIMEOUT_STATE.swap(TIMEOUT_WAITING, Ordering::Relaxed);
        let registered = state == TIMEOUT_IDLE && ruby_backtrace::at_safe_point(finish_timeout);
        if registered {
            timeout_grace::start();
        }
        if registered || (state == TIMEOUT_WAITING && !timeout_grace::over()) {
            // One more alarm while the grace lasts, in case Ruby never
            // gets to run the job. SAFETY: alarm is async-signal-safe.
            unsafe { libc::alarm(timeout_grace::ALARM_SECS) };
            return;
        }
        // The grace is over (or no job could be registered).
        target_state::mark_reporting_timeout();
        ruby_backtrace::print_once(TIMEOUT_RAW_HEADLINE, false);
        if OWN_FAULTS.load(Ordering::Relaxed) {
            crate::findings::fatal::timeout();
        }
    }
    // Under an engine whose faults are ruzzy's, its own timer (and ruzzy's
    // check between timeouts) ends here.
    if OWN_FAULTS.load(Ordering::Relaxed) {
        return;
    }
    if let Some(action) = LIBFUZZER[ALARM].get() {
        if target_state::timed_out() && target_state::running_here() {
            target_state::mark_reporting_timeout();
        }
        forward(action, signal, info, context);
    }
}

/// Runs at Ruby's safe point after a timeout alarm: prints Ruby's own
/// backtrace, then lets libFuzzer report the timeout (which ends the
/// process). If the input finished in the meantime, re-arms libFuzzer's
/// periodic alarm, which the grace alarm replaced, and does nothing else.
fn finish_timeout() {
    if TIMEOUT_STATE.swap(TIMEOUT_IDLE, Ordering::Relaxed) != TIMEOUT_WAITING {
        return;
    }
    if !(target_state::timed_out() && target_state::running_here()) {
        arm_timeout_timer();
        return;
    }
    if !crate::findings::crash_frames::hang_followed() {
        // The hang watch had not followed this input: it does from now
        // on, and the next alarm reports the hang, named by its loop.
        arm_timeout_timer();
        return;
    }
    target_state::mark_reporting_timeout();
    if target_state::claim_report() {
        ruby_backtrace::print_exact(TIMEOUT_HEADLINE);
        crate::findings::crash_frames::keep_current();
    }
    if OWN_FAULTS.load(Ordering::Relaxed) {
        crate::findings::fatal::timeout();
    }
    if let Some(action) = LIBFUZZER[ALARM].get() {
        forward(
            action,
            libc::SIGALRM,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
}

/// The alarm that checks for a timeout: every second. libFuzzer's own
/// period, `-timeout / 2 + 1` seconds, reports a hang anywhere up to half
/// the timeout late (a 25 s timeout at 38 s); with this one, within a
/// second of it.
fn arm_timeout_timer() {
    if target_state::timeout_secs() == 0 {
        return;
    }
    let period = libc::timeval {
        tv_sec: TIMEOUT_CHECK_SECS,
        tv_usec: 0,
    };
    let timer = libc::itimerval {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: setting the real-time interval timer from a valid struct.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
}

/// Ruby's own test for a machine stack overflow (signal.c,
/// check_stack_overflow): the fault is on the stack pointer's page or the
/// one below it, or between the stack and frame pointers.
fn stack_overflow(info: *mut libc::siginfo_t, context: *mut c_void) -> bool {
    if info.is_null() || context.is_null() {
        return false;
    }
    const PAGE: u64 = 4096;
    // SAFETY: for SA_SIGINFO handlers the kernel passes a valid siginfo
    // and ucontext.
    let ((sp, bp), fault) = unsafe {
        (
            stack_and_frame_pointers(&*(context as *const libc::ucontext_t)),
            (*info).si_addr() as u64,
        )
    };
    let (sp, bp, fault) = (sp / PAGE, bp / PAGE, fault / PAGE);
    fault != 0 && (sp == fault || sp == fault + 1 || (sp <= fault && fault <= bp))
}

/// The interrupted code's stack and frame pointers (x86_64: rsp, rbp).
#[cfg(target_arch = "x86_64")]
fn stack_and_frame_pointers(context: &libc::ucontext_t) -> (u64, u64) {
    let registers = &context.uc_mcontext.gregs;
    (
        registers[libc::REG_RSP as usize] as u64,
        registers[libc::REG_RBP as usize] as u64,
    )
}

/// The interrupted code's stack and frame pointers (AArch64: sp, x29).
#[cfg(target_arch = "aarch64")]
fn stack_and_frame_pointers(context: &libc::ucontext_t) -> (u64, u64) {
    (context.uc_mcontext.sp, context.uc_mcontext.regs[29])
}

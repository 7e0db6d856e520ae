//! How long a target that ran past `-timeout` is given to come back to
//! Ruby, where its report is exact (Ruby's own backtrace, a hang named by
//! the loop the hang watch followed), before its frames are read without
//! Ruby's help ([`crate::engine::signals`]): [`SECS`] of the clock, not
//! counting the time the fuzzing thread waited for a core. On a busy
//! machine the thread may get no core for most of a second; a loop whose
//! every turn holds Ruby's lock in C for most of a second (a C extension's
//! call) then missed the safe point at its next turn, and its report named
//! the moment it was stopped at instead of its loop: the same hang in two
//! groups. A thread blocked in a call (Kernel#sleep, a read) waits for no
//! core: its grace is the clock's. The wait is the kernel's run-queue
//! delay of the thread (`/proc/thread-self/schedstat`); where it cannot be
//! read, the clock alone. [`WALL_SECS`] of the clock at most.
//!
//! Invariants: called from the alarm handler only, on the fuzzing thread;
//! atomics, `clock_gettime`, `open`, `read` and `close` only
//! (async-signal-safe; the handler keeps the interrupted code's `errno`),
//! no allocation.

use crate::process::target_state;
use std::sync::atomic::{AtomicU64, Ordering};

/// The grace, in seconds of the clock the fuzzing thread did not spend
/// waiting for a core (the raw report's headline in
/// [`crate::engine::signals`] says it).
pub const SECS: u64 = 1;
/// The most time of the clock it is given.
pub const WALL_SECS: u64 = 5;
/// Less than this left of the grace counts as none: the alarm that asks
/// comes a little late itself.
const SLACK_NS: u64 = 20_000_000;

const NS: u64 = 1_000_000_000;
const UNKNOWN: u64 = u64::MAX;

static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static STARTED_DELAY_NS: AtomicU64 = AtomicU64::new(UNKNOWN);

/// The grace starts now (the job that reports at Ruby's safe point was
/// registered); returns how long it lasts, in ns, when nothing waits.
pub fn start() -> u64 {
    STARTED_DELAY_NS.store(run_delay_ns().unwrap_or(UNKNOWN), Ordering::Relaxed);
    STARTED_NS.store(target_state::now_ns(), Ordering::Relaxed);
    SECS * NS
}

/// What is left of the grace, in ns, or None when it is over: [`SECS`] of
/// the clock since [`start`], the time the thread waited for a core left
/// out, and [`WALL_SECS`] of the clock at most.
pub fn left_ns() -> Option<u64> {
    // The delay before the clock: a wait between the two reads shortens
    // the grace, never lengthens it.
    let delay = run_delay_ns();
    let wall = target_state::now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed));
    let started_delay = STARTED_DELAY_NS.load(Ordering::Relaxed);
    let waited = match delay {
        Some(delay) if started_delay != UNKNOWN => delay.saturating_sub(started_delay),
        _ => 0,
    };
    let left = (SECS * NS)
        .saturating_sub(wall.saturating_sub(waited))
        .min((WALL_SECS * NS).saturating_sub(wall));
    (left >= SLACK_NS).then_some(left)
}

/// The calling thread's run-queue delay so far, in ns: the second field
/// of `/proc/thread-self/schedstat` ("run time, run delay, time slices").
fn run_delay_ns() -> Option<u64> {
    let mut text = [0u8; 96];
    // SAFETY: a NUL-terminated path; open, read and close are
    // async-signal-safe, and read writes at most the buffer's length.
    let length = unsafe {
        let file = libc::open(
            c"/proc/thread-self/schedstat".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if file < 0 {
            return None;
        }
        let length = libc::read(file, text.as_mut_ptr().cast(), text.len());
        libc::close(file);
        length
    };
    let text = text.get(..usize::try_from(length).ok()?)?;
    second_field(text)
}

/// The second of the space-separated decimal numbers in `text`.
fn second_field(text: &[u8]) -> Option<u64> {
    let field = text.split(|&b| b == b' ').nth(1)?;
    let digits = field.strip_suffix(b"\n").unwrap_or(field);
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Parsing a str allocates nothing.
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_delay_is_the_second_field() {
        assert_eq!(second_field(b"552848418 444050 65\n"), Some(444_050));
        assert_eq!(second_field(b"1 2\n"), Some(2));
        assert_eq!(second_field(b"1\n"), None);
        assert_eq!(second_field(b"1 x2 3\n"), None);
        assert_eq!(second_field(b"1  3\n"), None);
    }

    #[test]
    fn this_kernel_says_how_long_a_thread_waited_for_a_core() {
        assert!(
            run_delay_ns().is_some(),
            "/proc/thread-self/schedstat cannot be read"
        );
    }

    /// Runs `work` on a thread that shares one core with a busy thread
    /// and gives way to it (SCHED_IDLE: no privilege needed), so it waits
    /// for the core most of the time, as on a busy machine.
    fn starved<T: Send>(work: impl FnOnce() -> T + Send) -> T {
        let busy = std::sync::atomic::AtomicBool::new(true);
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: a zeroed cpu_set_t is an empty set, which
        // sched_getaffinity fills with the cores this thread may use.
        let allowed = unsafe {
            let mut cpus: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, size, &mut cpus), 0);
            cpus
        };
        // SAFETY: CPU_ISSET reads a valid set.
        let core = (0..libc::CPU_SETSIZE as usize)
            .find(|&core| unsafe { libc::CPU_ISSET(core, &allowed) })
            .expect("no core to run on");
        // SAFETY: CPU_SET writes a valid set; sched_setaffinity only
        // changes the calling thread's own scheduling.
        let pin = || unsafe {
            let mut cpus: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut cpus);
            assert_eq!(libc::sched_setaffinity(0, size, &cpus), 0);
        };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pin();
                while busy.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
            let result = scope
                .spawn(|| {
                    pin();
                    let idle = libc::sched_param { sched_priority: 0 };
                    // SAFETY: as above.
                    let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &idle) };
                    assert_eq!(set, 0);
                    work()
                })
                .join();
            busy.store(false, Ordering::Relaxed);
            result.unwrap()
        })
    }

    #[test]
    fn a_thread_that_waits_for_a_core_keeps_its_grace() {
        let _process = crate::process::reset_for_tests();
        let (left_then, waited) = starved(|| {
            start();
            let until = std::time::Instant::now() + std::time::Duration::from_millis(1200);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            let delay = run_delay_ns().unwrap() - STARTED_DELAY_NS.load(Ordering::Relaxed);
            (left_ns(), delay)
        });
        assert!(
            waited > NS / 2,
            "the thread was not kept waiting ({waited} ns)"
        );
        assert!(
            left_then.is_some(),
            "a second of the clock spent waiting for a core ended the grace"
        );
    }

    #[test]
    fn a_thread_that_sleeps_waits_for_no_core_and_its_grace_is_the_clock() {
        let _process = crate::process::reset_for_tests();
        assert_eq!(start(), NS);
        assert!(left_ns().is_some_and(|left| left > NS / 2));
        std::thread::sleep(std::time::Duration::from_millis(1050));
        assert_eq!(left_ns(), None);
    }
}

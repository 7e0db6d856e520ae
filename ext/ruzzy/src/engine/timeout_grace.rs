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
//! core: its grace is the clock's. The wait is the thread's run-queue
//! delay ([`crate::process::run_delay`]); where it cannot be read, the
//! clock alone. [`WALL_SECS`] of the clock at most.
//!
//! Invariants: called from the alarm handler only, on the fuzzing thread;
//! atomics, `clock_gettime`, `open`, `read` and `close` only
//! (async-signal-safe; the handler keeps the interrupted code's `errno`),
//! no allocation.

use crate::process::run_delay::run_delay_ns;
use crate::process::target_state;
use std::sync::atomic::{AtomicU64, Ordering};

/// The grace, in seconds of the clock the fuzzing thread did not spend
/// waiting for a core (the raw report's headline in
/// [`crate::engine::signals`] says it).
pub const SECS: u64 = 1;
/// The most time of the clock it is given.
pub const WALL_SECS: u64 = 5;
/// How often the alarm looks again while the grace lasts.
pub const ALARM_SECS: u32 = 1;

const NS: u64 = 1_000_000_000;
const UNKNOWN: u64 = u64::MAX;

static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static STARTED_DELAY_NS: AtomicU64 = AtomicU64::new(UNKNOWN);

/// The grace starts now (the job that reports at Ruby's safe point was
/// registered).
pub fn start() {
    STARTED_DELAY_NS.store(run_delay_ns().unwrap_or(UNKNOWN), Ordering::Relaxed);
    STARTED_NS.store(target_state::now_ns(), Ordering::Relaxed);
}

/// Whether the grace is over: [`SECS`] of the clock went by since
/// [`start`], the time the thread waited for a core left out, or
/// [`WALL_SECS`] in all.
pub fn over() -> bool {
    // The delay before the clock: a wait between the two reads shortens
    // the grace, never lengthens it.
    let delay = run_delay_ns();
    let wall = target_state::now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed));
    let started_delay = STARTED_DELAY_NS.load(Ordering::Relaxed);
    let waited = match delay {
        Some(delay) if started_delay != UNKNOWN => delay.saturating_sub(started_delay),
        _ => 0,
    };
    wall.saturating_sub(waited) >= SECS * NS || wall >= WALL_SECS * NS
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (over_then, waited) = starved(|| {
            start();
            let until = std::time::Instant::now() + std::time::Duration::from_millis(1200);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            let delay = run_delay_ns().unwrap() - STARTED_DELAY_NS.load(Ordering::Relaxed);
            (over(), delay)
        });
        assert!(
            waited > NS / 2,
            "the thread was not kept waiting ({waited} ns)"
        );
        assert!(
            !over_then,
            "a second of the clock spent waiting for a core ended the grace"
        );
    }

    #[test]
    fn a_thread_that_sleeps_waits_for_no_core_and_its_grace_is_the_clock() {
        let _process = crate::process::reset_for_tests();
        start();
        assert!(!over());
        std::thread::sleep(std::time::Duration::from_millis(1050));
        assert!(over());
    }
}

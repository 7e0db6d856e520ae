//! The memory limit for an engine that does not keep it: LibAFL's runtime
//! reads `-rss_limit_mb` but never ends the process at it. Once a second,
//! on a thread of its own, the process's peak resident memory is read (as
//! libFuzzer's own watcher reads it); over the limit, the input in progress
//! is an out-of-memory finding ([`crate::findings::fatal::out_of_memory`]).
//!
//! Invariants: started at most once, before the driver, and only for such
//! an engine; after it starts the thread allocates nothing and takes no
//! lock (getrusage and nanosleep only), so it cannot stall the fuzzing
//! thread.

use std::sync::atomic::{AtomicBool, Ordering};

static STARTED: AtomicBool = AtomicBool::new(false);

/// Watches for more than `limit_mb` MiB of resident memory (0: no limit).
pub fn start(limit_mb: u64) {
    if limit_mb == 0 || STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("ruzzy-rss-limit".to_owned())
        .spawn(move || watch(limit_mb));
    if let Err(error) = spawned {
        eprintln!("WARNING: ruzzy: -rss_limit_mb is not kept: cannot start its watcher ({error})");
    }
}

fn watch(limit_mb: u64) {
    let second = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    loop {
        // SAFETY: sleeps on a valid timespec.
        unsafe { libc::nanosleep(&second, std::ptr::null_mut()) };
        let used_mb = peak_rss_mb();
        if used_mb > limit_mb {
            crate::findings::fatal::out_of_memory(used_mb, limit_mb);
        }
    }
}

/// The process's peak resident memory in MiB.
fn peak_rss_mb() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    (usage.ru_maxrss.max(0) as u64) >> 10
}

//! The SSRF detector's backstop for C code (`Ruzzy::Detectors::SSRF`): a
//! `connect` that C extensions and the libraries they link call instead of
//! libc's ([`super::got_patch`]). A stream (TCP) connection to an address
//! the harness did not allow is refused before it is made (`EACCES`), and
//! the first one of an input is held for the callback, which turns it into
//! the finding (`Ruzzy::Detectors::SSRF.native_connect`). Ruby's own socket
//! extension is left alone: its calls pass the detector's Ruby hooks first,
//! which name the Ruby method and see host names before they are resolved.
//! UNIX-domain sockets, datagram sockets and sockets of other families
//! pass. Objects loaded while fuzzing (a C extension required by the fuzz
//! target) are redirected too, from the end of the input that loaded them:
//! each input's end compares the length of `$LOADED_FEATURES` with the
//! last one seen.
//!
//! Invariants: [`guarded_connect`] may run on any thread, with or without
//! the GVL: it reads and writes atomics only, allocates nothing and calls
//! libc's `getsockopt` and `connect`. The allowed list only grows, written
//! with the GVL held before its new length is published (release/acquire).

use super::got_patch;
use crate::rb;
use crate::ruby_classes::RubyClass;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// How many allowed destinations the backstop holds.
const MAX_ALLOWED: usize = 256;

/// One allowed destination: address (16 bytes, IPv4 in the first 4), and
/// family, prefix length and port (0: any) packed into `meta`.
struct Allowed {
    high: AtomicU64,
    low: AtomicU64,
    meta: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Allowed = Allowed {
    high: AtomicU64::new(0),
    low: AtomicU64::new(0),
    meta: AtomicU64::new(0),
};

static ALLOWED: [Allowed; MAX_ALLOWED] = [EMPTY; MAX_ALLOWED];

impl Allowed {
    /// Makes this entry allow `destination`'s first `prefix` address bits
    /// on its port (0: any).
    fn store(&self, destination: &Destination, prefix: u8) {
        let (high, low) = destination.halves();
        self.high.store(high, Ordering::Relaxed);
        self.low.store(low, Ordering::Relaxed);
        self.meta.store(destination.pack(prefix), Ordering::Relaxed);
    }
}
static ALLOWED_COUNT: AtomicUsize = AtomicUsize::new(0);
/// Whether connections are checked (from `guard` on).
static GUARDING: AtomicBool = AtomicBool::new(false);
/// `$LOADED_FEATURES` (the interpreter's own Array, alive for the whole
/// process) and its length when the GOT slots were last redirected.
static LOADED_FEATURES: AtomicUsize = AtomicUsize::new(0);
static FEATURES_SEEN: AtomicUsize = AtomicUsize::new(0);
/// Whether a refused connection is held for the callback, and what it was.
static HELD: AtomicBool = AtomicBool::new(false);
static HELD_HIGH: AtomicU64 = AtomicU64::new(0);
static HELD_LOW: AtomicU64 = AtomicU64::new(0);
static HELD_META: AtomicU64 = AtomicU64::new(0);

/// A destination as the backstop compares it.
#[derive(Clone, Copy)]
struct Destination {
    family: u16,
    address: [u8; 16],
    port: u16,
}

impl Destination {
    /// The destination `address` (of `length` bytes) names, if it is an
    /// IPv4 or IPv6 one.
    ///
    /// # Safety
    /// `address` must point at `length` readable bytes (or be null).
    unsafe fn of(address: *const libc::sockaddr, length: libc::socklen_t) -> Option<Destination> {
        if address.is_null() || (length as usize) < std::mem::size_of::<libc::sa_family_t>() {
            return None;
        }
        // SAFETY: at least the family is readable (checked above).
        let family = unsafe { (*address).sa_family } as c_int;
        let mut bytes = [0u8; 16];
        if family == libc::AF_INET && length as usize >= std::mem::size_of::<libc::sockaddr_in>() {
            // SAFETY: an AF_INET address of sockaddr_in's size.
            let ipv4 = unsafe { &*(address as *const libc::sockaddr_in) };
            bytes[..4].copy_from_slice(&ipv4.sin_addr.s_addr.to_ne_bytes());
            return Some(Destination {
                family: libc::AF_INET as u16,
                address: bytes,
                port: u16::from_be(ipv4.sin_port),
            });
        }
        if family == libc::AF_INET6 && length as usize >= std::mem::size_of::<libc::sockaddr_in6>()
        {
            // SAFETY: an AF_INET6 address of sockaddr_in6's size.
            let ipv6 = unsafe { &*(address as *const libc::sockaddr_in6) };
            return Some(Destination {
                family: libc::AF_INET6 as u16,
                address: ipv6.sin6_addr.s6_addr,
                port: u16::from_be(ipv6.sin6_port),
            });
        }
        None
    }

    fn halves(&self) -> (u64, u64) {
        let (high, low) = self.address.split_at(8);
        (
            u64::from_be_bytes(high.try_into().unwrap_or_default()),
            u64::from_be_bytes(low.try_into().unwrap_or_default()),
        )
    }

    fn pack(&self, prefix: u8) -> u64 {
        (u64::from(self.family) << 32) | (u64::from(prefix) << 16) | u64::from(self.port)
    }

    /// Whether the allowed entry `allowed` covers this destination.
    fn allowed_by(&self, allowed: &Allowed) -> bool {
        let meta = allowed.meta.load(Ordering::Relaxed);
        let (family, prefix, port) = ((meta >> 32) as u16, (meta >> 16) as u8 as u32, meta as u16);
        if family != self.family || (port != 0 && port != self.port) {
            return false;
        }
        let (high, low) = self.halves();
        let wanted = (
            allowed.high.load(Ordering::Relaxed),
            allowed.low.load(Ordering::Relaxed),
        );
        let mask = |bits: u32| {
            if bits == 0 {
                0
            } else {
                u64::MAX << (64 - bits.min(64))
            }
        };
        let (high_mask, low_mask) = (mask(prefix), mask(prefix.saturating_sub(64)));
        high & high_mask == wanted.0 & high_mask && low & low_mask == wanted.1 & low_mask
    }

    fn allowed(&self) -> bool {
        let count = ALLOWED_COUNT.load(Ordering::Acquire);
        ALLOWED[..count]
            .iter()
            .any(|allowed| self.allowed_by(allowed))
    }
}

/// `Ruzzy::Native._guard_connect`: from now on C code's stream connections
/// to destinations not allowed are refused and held as findings. Returns
/// how many call sites were redirected, or nil where the backstop cannot
/// work (an architecture whose relocations are not known).
pub fn guard() -> Option<usize> {
    let features = rb::global_variable(c"$LOADED_FEATURES");
    FEATURES_SEEN.store(
        rb::value::array_len(features).unwrap_or(0),
        Ordering::Relaxed,
    );
    let patched = redirect()?;
    LOADED_FEATURES.store(features as usize, Ordering::Relaxed);
    GUARDING.store(true, Ordering::Relaxed);
    Some(patched)
}

fn redirect() -> Option<usize> {
    got_patch::redirect(
        c"connect",
        guarded_connect as *const c_void,
        &["/socket.so"],
    )
}

/// Redirects the objects loaded since the last look (called at each
/// input's end, with the GVL; one Array length read when nothing was
/// loaded).
fn redirect_newly_loaded() {
    let features = LOADED_FEATURES.load(Ordering::Relaxed) as rb_sys::VALUE;
    if features == 0 {
        return;
    }
    let length = rb::value::array_len(features).unwrap_or(0);
    if length != FEATURES_SEEN.load(Ordering::Relaxed) {
        FEATURES_SEEN.store(length, Ordering::Relaxed);
        redirect();
    }
}

/// `Ruzzy::Native._allow_connect(family, address, prefix, port)`: allows
/// connections to `address` (4 or 16 network-order bytes; the first
/// `prefix` bits compared) on `port` (0: any). False when the list is full.
pub fn allow(
    ruby: &magnus::Ruby,
    family: u16,
    address: magnus::RString,
    prefix: u8,
    port: u16,
) -> Result<bool, magnus::Error> {
    // SAFETY: the bytes are copied at once; no Ruby code runs meanwhile.
    let bytes = unsafe { address.as_slice() }.to_vec();
    let family = match (family, bytes.len()) {
        (4, 4) => libc::AF_INET as u16,
        (6, 16) => libc::AF_INET6 as u16,
        _ => {
            return Err(magnus::Error::new(
                ruby.exception_arg_error(),
                "an IPv4 or IPv6 address in network order",
            ))
        }
    };
    let count = ALLOWED_COUNT.load(Ordering::Relaxed);
    if count == MAX_ALLOWED {
        return Ok(false);
    }
    let mut address = [0u8; 16];
    address[..bytes.len()].copy_from_slice(&bytes);
    let destination = Destination {
        family,
        address,
        port,
    };
    ALLOWED[count].store(
        &destination,
        prefix.min(if bytes.len() == 4 { 32 } else { 128 }),
    );
    ALLOWED_COUNT.store(count + 1, Ordering::Release);
    Ok(true)
}

/// The `connect` C code calls once [`guard`] ran.
unsafe extern "C" fn guarded_connect(
    socket: c_int,
    address: *const libc::sockaddr,
    length: libc::socklen_t,
) -> c_int {
    if GUARDING.load(Ordering::Relaxed) && is_stream(socket) {
        // SAFETY: connect's contract: `address` points at `length` bytes.
        if let Some(destination) = unsafe { Destination::of(address, length) } {
            if !destination.allowed() {
                hold(&destination);
                // SAFETY: errno is this thread's.
                unsafe { *libc::__errno_location() = libc::EACCES };
                return -1;
            }
        }
    }
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { libc::connect(socket, address, length) }
}

fn is_stream(socket: c_int) -> bool {
    let mut kind: c_int = 0;
    let mut size = std::mem::size_of::<c_int>() as libc::socklen_t;
    // SAFETY: SO_TYPE writes one int into `kind`, whose size we pass.
    let found = unsafe {
        libc::getsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut c_int).cast(),
            &mut size,
        )
    };
    found == 0 && kind == libc::SOCK_STREAM
}

/// Holds the first refused destination of the input.
fn hold(destination: &Destination) {
    if HELD.load(Ordering::Acquire) {
        return;
    }
    let (high, low) = destination.halves();
    HELD_HIGH.store(high, Ordering::Relaxed);
    HELD_LOW.store(low, Ordering::Relaxed);
    HELD_META.store(destination.pack(0), Ordering::Relaxed);
    HELD.store(true, Ordering::Release);
}

/// The finding for the connection refused during the input that just
/// ended, built by Ruby, or None. Clears what was held. With the GVL.
pub fn take() -> Option<rb_sys::VALUE> {
    redirect_newly_loaded();
    if !HELD.load(Ordering::Acquire) {
        return None;
    }
    let (high, low, meta) = (
        HELD_HIGH.load(Ordering::Relaxed),
        HELD_LOW.load(Ordering::Relaxed),
        HELD_META.load(Ordering::Relaxed),
    );
    HELD.store(false, Ordering::Release);
    let mut address = [0u8; 16];
    address[..8].copy_from_slice(&high.to_be_bytes());
    address[8..].copy_from_slice(&low.to_be_bytes());
    let length = if (meta >> 32) as c_int == libc::AF_INET {
        4
    } else {
        16
    };
    let port = meta as u16;
    rb::protect(|ruby| {
        let bytes = ruby.binary_string(&address[..length]);
        let port = ruby.unsigned(u64::from(port));
        ruby.call_class_method(RubyClass::Ssrf.path(), "native_connect", &[bytes, port])
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn destination(family: c_int, address: &[u8], port: u16) -> Destination {
        let mut bytes = [0u8; 16];
        bytes[..address.len()].copy_from_slice(address);
        Destination {
            family: family as u16,
            address: bytes,
            port,
        }
    }

    fn allows(allowed: (&Destination, u8), wanted: &Destination) -> bool {
        let entry = EMPTY;
        entry.store(allowed.0, allowed.1);
        wanted.allowed_by(&entry)
    }

    #[test]
    fn an_address_allows_itself_on_its_port_or_any() {
        let server = destination(libc::AF_INET, &[127, 0, 0, 1], 5432);
        assert!(allows((&server, 32), &server));
        assert!(!allows(
            (&server, 32),
            &destination(libc::AF_INET, &[127, 0, 0, 1], 5433)
        ));
        assert!(!allows(
            (&server, 32),
            &destination(libc::AF_INET, &[127, 0, 0, 2], 5432)
        ));
        let any_port = destination(libc::AF_INET, &[127, 0, 0, 1], 0);
        assert!(allows(
            (&any_port, 32),
            &destination(libc::AF_INET, &[127, 0, 0, 1], 9)
        ));
    }

    #[test]
    fn a_prefix_allows_its_range_in_its_family_only() {
        let ten = destination(libc::AF_INET, &[10, 0, 0, 0], 0);
        assert!(allows(
            (&ten, 8),
            &destination(libc::AF_INET, &[10, 200, 1, 2], 80)
        ));
        assert!(!allows(
            (&ten, 8),
            &destination(libc::AF_INET, &[11, 0, 0, 1], 80)
        ));
        let everything = destination(libc::AF_INET, &[0; 4], 0);
        assert!(allows(
            (&everything, 0),
            &destination(libc::AF_INET, &[8, 8, 8, 8], 53)
        ));
        assert!(!allows(
            (&everything, 0),
            &destination(libc::AF_INET6, &[0; 16], 53)
        ));
        let mut loopback6 = [0u8; 16];
        loopback6[15] = 1;
        let ipv6 = destination(libc::AF_INET6, &loopback6, 0);
        assert!(allows((&ipv6, 128), &ipv6));
        let mut other = loopback6;
        other[15] = 2;
        assert!(!allows(
            (&ipv6, 128),
            &destination(libc::AF_INET6, &other, 0)
        ));
        assert!(allows(
            (&ipv6, 120),
            &destination(libc::AF_INET6, &other, 0)
        ));
    }
}

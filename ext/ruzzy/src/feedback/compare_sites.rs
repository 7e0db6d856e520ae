//! Comparison feedback for libFuzzer, one PC per Ruby call site.
//!
//! libFuzzer's `__sanitizer_cov_trace_cmp8` and `__sanitizer_cov_trace_div8`
//! take the caller's return address as the comparison's PC. Calling them
//! from one Rust function would make every Ruby comparison look like one
//! site to `-use_value_profile`. Instead each call goes through one of
//! `SITES` tiny assembly stubs (x86_64 and AArch64: one table per
//! architecture below, linked in, never written at run time), chosen by
//! hashing the Ruby call site (path, iseq start, pc offset): the return
//! address inside the stub is the site's PC. The memcmp/memmem hooks take
//! the PC as an argument.
//!
//! A site that compares the same operands again within a few inputs is
//! reported once ([`reported_pairs`]): libFuzzer learns nothing new from the
//! repeats.
//!
//! Callers are located by the process's one [`locator`]: a comparison made
//! by code that is not instrumented (ruzzy itself, RubyGems, excluded
//! paths) has no site and is not reported. Locating has no side effect; a
//! hook that reports a comparison also counts its site as coverage, with an
//! explicit [`reach`] (not in a method quiet coverage switched off).
//!
//! Invariants: no allocation, no lock; runs with the GVL held (inside a
//! Ruby method call), which also guards the two padding buffers.

use crate::coverage::hook;
use crate::coverage::location::{self, mix};
use crate::coverage::locator;
use crate::coverage::path_registry::hash_bytes;
use crate::feedback::reported_pairs;
use crate::process::libfuzzer;
use crate::rb::value::Frame;
use std::cell::UnsafeCell;
use std::ffi::c_void;

/// Keeps the sites harnesses name apart from those of Ruby code.
const HARNESS_SITE_SALT: u64 = 0x6861_726e_6573_7300;

/// Number of distinct comparison PCs.
pub const SITES: usize = 4096;
/// Bytes per stub.
const STUB_BYTES: usize = 16;
/// Alignment of the stub table. libFuzzer keys its tables of recent byte
/// comparisons and its value profile by the PC's low 12 bits; with the
/// table on a 4 KiB boundary those bits depend on the site only, not on
/// where the linker put the table, so a seed runs the same inputs whatever
/// the build.
const TABLE_ALIGN: usize = 4096;
/// Longest prefix of a byte comparison libFuzzer learns from.
const MAX_BYTES: usize = 64;

// x86_64: a stub keeps the stack 16-byte aligned around `call r11` (the
// hook), so the hook's return address is the stub's start + 7.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .text.ruzzy_cmp_stubs,\"ax\",@progbits",
    ".balign {table_align}",
    ".globl ruzzy_cmp_stubs",
    ".hidden ruzzy_cmp_stubs",
    "ruzzy_cmp_stubs:",
    ".rept {sites}",
    "sub rsp, 8",
    "call r11",
    "add rsp, 8",
    "ret",
    ".balign {stub_bytes}",
    ".endr",
    ".globl ruzzy_call_via_stub",
    ".hidden ruzzy_call_via_stub",
    "ruzzy_call_via_stub:",
    "mov r11, rdx",
    "jmp rcx",
    ".popsection",
    sites = const SITES,
    stub_bytes = const STUB_BYTES,
    table_align = const TABLE_ALIGN,
);
/// Where the hook's return address is inside a stub.
#[cfg(target_arch = "x86_64")]
const RETURN_OFFSET: usize = 7;

// AArch64: four fixed-size instructions. A stub saves the frame pointer and
// the link register (x30, its own return address: `bl`/`blr` overwrite it),
// calls the hook through x16 (IP0, the intra-procedure-call scratch
// register), so x30 = the stub's start + 8 is the hook's
// `__builtin_return_address(0)`, and restores them.
#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".pushsection .text.ruzzy_cmp_stubs,\"ax\",%progbits",
    ".balign {table_align}",
    ".globl ruzzy_cmp_stubs",
    ".hidden ruzzy_cmp_stubs",
    "ruzzy_cmp_stubs:",
    ".rept {sites}",
    "stp x29, x30, [sp, #-16]!",
    "blr x16",
    "ldp x29, x30, [sp], #16",
    "ret",
    ".balign {stub_bytes}",
    ".endr",
    ".globl ruzzy_call_via_stub",
    ".hidden ruzzy_call_via_stub",
    "ruzzy_call_via_stub:",
    "mov x16, x2",
    "br x3",
    ".popsection",
    sites = const SITES,
    stub_bytes = const STUB_BYTES,
    table_align = const TABLE_ALIGN,
);
/// Where the hook's return address is inside a stub.
#[cfg(target_arch = "aarch64")]
const RETURN_OFFSET: usize = 8;

extern "C" {
    static ruzzy_cmp_stubs: [u8; SITES * STUB_BYTES];
    /// Calls `hook(a, b)` from inside `stub`, so the hook's return address
    /// identifies the stub.
    fn ruzzy_call_via_stub(a: u64, b: u64, hook: *const c_void, stub: *const u8);
}

/// A comparison site: an index into the stub table, and the location of
/// the Ruby code it stands for (None when it could not be located).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteId {
    stub: usize,
    location: Option<u64>,
    /// Quiet coverage has switched the coverage of its method off.
    quiet: bool,
}

impl SiteId {
    /// The site of comparisons whose caller cannot be located.
    pub const UNKNOWN: SiteId = SiteId {
        stub: 0,
        location: None,
        quiet: false,
    };

    /// The site of the Ruby code at `location`, in a method whose coverage
    /// quiet coverage has switched off or not.
    fn at(location: u64, quiet: bool) -> SiteId {
        SiteId {
            stub: (location as usize) & (SITES - 1),
            location: Some(location),
            quiet,
        }
    }

    /// The site a harness named `id` (the guidance API); it stands for no
    /// Ruby code, and no edge counter.
    pub fn for_id(id: u64) -> SiteId {
        SiteId {
            stub: (mix(id ^ HARNESS_SITE_SALT) as usize) & (SITES - 1),
            location: None,
            quiet: false,
        }
    }

    /// The location of the Ruby code, if it was located.
    pub fn location(self) -> Option<u64> {
        self.location
    }

    /// The site's index in the stub table (sites may share one).
    pub fn index(self) -> usize {
        self.stub
    }
}

/// The site of the Ruby code calling the running C method, or None when
/// that code is not instrumented (its comparisons are not reported).
/// [`SiteId::UNKNOWN`] when the caller cannot be located: a C caller (a C
/// method calling `==` through `rb_funcall`), an unknown interpreter layout.
#[inline(always)]
pub fn caller(frame: &Frame) -> Option<SiteId> {
    locate(frame, Some(SiteId::UNKNOWN))
}

/// Like [`caller`], but None when the caller is a C method (String#match
/// calling Regexp#match: the outer call reports at its own site). Without
/// frame locations at all (public-API mode), the unknown site.
#[inline(always)]
pub fn ruby_caller(frame: &Frame) -> Option<SiteId> {
    let c_caller = if location::precise() {
        None
    } else {
        Some(SiteId::UNKNOWN)
    };
    locate(frame, c_caller)
}

/// The site of the calling Ruby code; `unlocated` when there is none.
#[inline(always)]
fn locate(frame: &Frame, unlocated: Option<SiteId>) -> Option<SiteId> {
    let Some(site) = location::caller_site(frame) else {
        return unlocated;
    };
    let Some(locator) = locator::get() else {
        return Some(SiteId::UNKNOWN);
    };
    let Some(info) = locator.iseq(frame, &site) else {
        return Some(SiteId::UNKNOWN);
    };
    if !info.included {
        return None;
    }
    Some(SiteId::at(
        locator::location(&info, &site),
        info.switched_off,
    ))
}

/// Counts `site` as coverage ([`hook::reach_compare_site`]), unless quiet
/// coverage has switched its method's coverage off: reaching the site says
/// no more than the method's own events, which are off too, and libFuzzer
/// would go on paying for the counter after every input. Its comparisons are
/// still reported: they are what solves the conditions of the arms no input
/// has run yet.
#[inline(always)]
pub fn reach(site: SiteId) {
    if !site.quiet {
        hook::reach_compare_site(site.location);
    }
}

/// The PC that stands for `site`: the hook's return address inside its
/// stub.
fn pc(site: SiteId) -> *const c_void {
    let stubs = std::ptr::addr_of!(ruzzy_cmp_stubs) as *const u8;
    stubs.wrapping_add(site.stub * STUB_BYTES + RETURN_OFFSET) as *const c_void
}

/// What kind of report a hash stands for, so that equal operands of an
/// integer comparison, a division and a byte comparison do not share one.
const CMP8: u64 = 1;
const DIV8: u64 = 2;
const SUBSTRING: u64 = 3;
const VALUES: u64 = 4;
/// A byte comparison reported from `slots` PCs: `BYTES + slots`.
const BYTES: u64 = 5;

/// Whether `operands` (a hash of them) compared at `site` in a report of
/// `kind` have not been reported in this epoch (see [`reported_pairs`]).
#[inline(always)]
fn fresh(site: SiteId, kind: u64, operands: u64) -> bool {
    reported_pairs::first_this_epoch(mix(operands ^ ((site.stub as u64) << 16 | kind)))
}

/// Whether the values `a` and `b`, each standing for its contents (a
/// Symbol for its name), have not been compared at `site` in this epoch.
/// Lets a hook skip reading operands it would report again.
#[inline(always)]
pub fn fresh_values(site: SiteId, a: u64, b: u64) -> bool {
    fresh(site, VALUES, mix(a) ^ b)
}

/// A hash of a byte operand as libFuzzer reads it: its length and its first
/// `MAX_BYTES` bytes.
#[inline(always)]
fn bytes_hash(bytes: &[u8]) -> u64 {
    hash_bytes(&bytes[..bytes.len().min(MAX_BYTES)]) ^ bytes.len() as u64
}

#[inline(always)]
fn call_at(site: SiteId, hook: *const c_void, a: u64, b: u64) {
    // SAFETY: `hook` takes at most two u64 arguments and returns nothing;
    // the stub is inside the table (site.stub < SITES).
    unsafe {
        let stubs = std::ptr::addr_of!(ruzzy_cmp_stubs) as *const u8;
        ruzzy_call_via_stub(a, b, hook, stubs.add(site.stub * STUB_BYTES));
    }
}

/// Reports an integer comparison; false when the same operands were
/// already reported at `site` in this epoch (and nothing was reported), so
/// a caller can skip what it would derive from them again.
#[inline(always)]
pub fn cmp8(site: SiteId, a: u64, b: u64) -> bool {
    if !fresh(site, CMP8, mix(a) ^ b) {
        return false;
    }
    call_at(site, libfuzzer::get().trace_cmp8 as *const c_void, a, b);
    true
}

/// Reports an integer divisor.
#[inline(always)]
pub fn div8(site: SiteId, divisor: u64) {
    if !fresh(site, DIV8, divisor) {
        return;
    }
    call_at(
        site,
        libfuzzer::get().trace_div8 as *const c_void,
        divisor,
        0,
    );
}

struct Padding(UnsafeCell<[[u8; MAX_BYTES]; 2]>);
// SAFETY: only used with the GVL held (module invariant).
unsafe impl Sync for Padding {}
static PADDING: Padding = Padding(UnsafeCell::new([[0; MAX_BYTES]; 2]));

/// Reports a byte-string comparison (equality or ordering) of `a` and `b`,
/// and their lengths as integers.
pub fn bytes(site: SiteId, a: &[u8], b: &[u8]) {
    bytes_in_slots(site, a, b, 1);
}

/// Like [`bytes`], reported as from `slots` neighbouring PCs of the site:
/// libFuzzer files a byte comparison in one of the few slots of its table
/// of recent comparisons, chosen by PC and contents, and every later
/// comparison may take that slot; a proposal in `slots` slots is drawn
/// `slots` times as often and outlives more of them.
pub fn bytes_in_slots(site: SiteId, a: &[u8], b: &[u8], slots: usize) {
    if a == b
        || !fresh(
            site,
            BYTES + slots as u64,
            bytes_hash(a) ^ mix(bytes_hash(b)),
        )
    {
        return;
    }
    if a.len() != b.len() {
        cmp8(site, a.len() as u64, b.len() as u64);
    }
    let n = a.len().max(b.len()).min(MAX_BYTES);
    if n <= 1 && a.len() == b.len() {
        return;
    }
    // SAFETY: GVL held (module invariant): nobody else uses the buffers.
    let padding = unsafe { &mut *PADDING.0.get() };
    let [left, right] = padding;
    let a = pad(a, n, left);
    let b = pad(b, n, right);
    let result = match a.cmp(b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => return,
    };
    // Both pointers have `n` readable bytes (padded copies when a side was
    // shorter); libFuzzer reads at most `n`.
    let hook = libfuzzer::get().weak_hook_memcmp;
    for slot in 0..slots {
        // SAFETY: as above; the PC is only a number to libFuzzer.
        unsafe {
            hook(
                pc(site).wrapping_byte_add(slot),
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                n,
                result,
            );
        }
    }
}

/// Reports a substring search for `needle` in `haystack`.
pub fn substring(site: SiteId, haystack: &[u8], needle: &[u8]) {
    // libFuzzer keeps the needle only.
    if needle.len() < 2 || !fresh(site, SUBSTRING, bytes_hash(needle)) {
        return;
    }
    // SAFETY: both slices are valid for their lengths; libFuzzer only
    // reads them during the call.
    unsafe {
        (libfuzzer::get().weak_hook_memmem)(
            pc(site),
            haystack.as_ptr().cast(),
            haystack.len(),
            needle.as_ptr().cast(),
            needle.len(),
            std::ptr::null_mut(),
        );
    }
}

/// `bytes` itself when it has `n` bytes, else a zero-padded copy in `buffer`.
fn pad<'a>(bytes: &'a [u8], n: usize, buffer: &'a mut [u8; MAX_BYTES]) -> &'a [u8] {
    if bytes.len() >= n {
        return &bytes[..n];
    }
    buffer[..bytes.len()].copy_from_slice(bytes);
    buffer[bytes.len()..n].fill(0);
    &buffer[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_extends_the_shorter_side_with_zeros() {
        let mut buffer = [0xff; MAX_BYTES];
        assert_eq!(pad(b"ab", 4, &mut buffer), b"ab\0\0");
        assert_eq!(pad(b"abcdef", 4, &mut buffer), b"abcd");
    }

    #[test]
    fn sites_have_distinct_pcs() {
        let site = |stub| SiteId {
            stub,
            location: None,
            quiet: false,
        };
        assert_ne!(pc(site(1)), pc(site(2)));
        assert_eq!(pc(site(3)) as usize - pc(site(2)) as usize, STUB_BYTES);
    }
}

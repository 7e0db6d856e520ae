//! Feedback for numbers that the input spells in text, and for Floats.
//!
//! A number parsed from the input (`Integer(s)`, `Float(s)`, `s.to_i`,
//! `s.to_f`) and then compared with a constant gives libFuzzer nothing it
//! can use as an integer comparison: the input holds digits, not the
//! number's bytes. The conversion hooks record the text each conversion
//! read and the number it made ([`record_integer`], [`record_float`]) in a
//! small ring, cleared before every input; when a comparison meets a
//! number from the ring, the digits of the other operand are proposed in
//! place of the digits the input had (a byte comparison at the same site),
//! written in the same style (leading zeros kept).
//!
//! Numbers read from the input's bytes (`getbyte`, `unpack1`, `unpack`)
//! go into the same ring with the bytes around them ([`record_read`]):
//! when one is compared, the other operand, encoded the same way (width
//! and byte order), is proposed in place of its bytes, neighbours kept (a
//! checksum byte, a length field, a magic number read as an Integer).
//! A site's first such proposal in an input takes several slots of
//! libFuzzer's table of recent byte comparisons ([`READ_SLOTS`]), so that
//! the other comparisons do not push it out before its input is mutated.
//!
//! Floats are also compared as their IEEE bits (for binary formats) and
//! their shortest decimal text is offered as a dictionary word.
//!
//! Invariants: no allocation (fixed buffers; numbers are formatted on the
//! stack); runs with the GVL held, which guards the ring.

use crate::feedback::compare_sites::{self, SiteId};
use crate::feedback::unpack_format::Encoding;
use std::cell::UnsafeCell;
use std::io::Write;

/// Conversions remembered per input.
const RING: usize = 16;
/// The bytes kept on each side of a number read from bytes: enough for a
/// byte comparison of two bytes or more, and to find the spot again.
const NEIGHBOURS: usize = 1;
/// The slots of libFuzzer's table of recent byte comparisons that a
/// proposal for a number read from bytes takes (see
/// [`compare_sites::bytes_in_slots`]): a checksum's proposal is made anew
/// by nearly every input, each with the bytes of its own sum, and a
/// parser's other comparisons take its slot before the one input it fits
/// is mutated again. Only the first proposal of a site in an input, for
/// [`WIDE_SITES`] sites, takes them; the rest take one (a loop comparing
/// every byte it reads would otherwise pay for each).
const READ_SLOTS: usize = 8;
/// Sites per input whose first proposal takes [`READ_SLOTS`] slots.
const WIDE_SITES: usize = 8;
/// Longest conversion text kept.
const TEXT: usize = 40;
/// Longest formatted number.
const NUMBER: usize = 40;

#[derive(Clone, Copy)]
enum Value {
    Integer(u64),
    Float(u64),
    /// A number read from bytes: its value, and where its bytes lie in the
    /// conversion's text (from `at`, encoded as `encoding`).
    Read {
        value: u64,
        at: u8,
        encoding: Encoding,
    },
}

#[derive(Clone, Copy)]
struct Conversion {
    value: Value,
    text: [u8; TEXT],
    len: u8,
}

struct Ring {
    entries: [Conversion; RING],
    count: usize,
    next: usize,
    /// How many of the entries hold an Integer (converted or read) equal
    /// to each value modulo 256: an Integer comparison whose operands'
    /// buckets are both empty skips the search (a binary parser compares
    /// its loop counters while its byte reads fill the ring).
    buckets: [u8; 256],
    /// The sites (stub indexes) whose proposal of a read number took
    /// [`READ_SLOTS`] slots in this input, `wide` of them.
    wide_sites: [usize; WIDE_SITES],
    wide: usize,
}

struct Shared(UnsafeCell<Ring>);
// SAFETY: only used with the GVL held (module invariant).
unsafe impl Sync for Shared {}

static CONVERSIONS: Shared = Shared(UnsafeCell::new(Ring {
    entries: [Conversion {
        value: Value::Integer(0),
        text: [0; TEXT],
        len: 0,
    }; RING],
    count: 0,
    next: 0,
    buckets: [0; 256],
    wide_sites: [0; WIDE_SITES],
    wide: 0,
}));

/// Runs `f` on the ring; no reference to it leaves `f`. Private, and no
/// closure passed here calls it again, so the reference is the only one.
fn with_ring<R>(f: impl FnOnce(&mut Ring) -> R) -> R {
    // SAFETY: the GVL is held (module invariant), so one hook runs at a
    // time, and `with_ring` is not re-entered from `f` (see above).
    f(unsafe { &mut *CONVERSIONS.0.get() })
}

fn has_conversions() -> bool {
    with_ring(|ring| ring.count > 0)
}

/// The bucket of an Integer in [`Ring::buckets`].
#[inline(always)]
fn bucket(value: u64) -> usize {
    (value % 256) as usize
}

/// Whether an Integer equal to `value` may be remembered.
#[inline(always)]
fn may_hold_integer(value: u64) -> bool {
    with_ring(|ring| ring.buckets[bucket(value)] != 0)
}

impl Value {
    /// The Integer a conversion or a read made, or None (a Float).
    fn integer(self) -> Option<u64> {
        match self {
            Value::Integer(value) | Value::Read { value, .. } => Some(value),
            Value::Float(_) => None,
        }
    }
}

/// Before each run of the target (the engine's lifecycle): forgets the
/// conversions of the previous one.
#[inline]
pub fn before_input() {
    with_ring(|ring| {
        if ring.count > 0 {
            ring.count = 0;
            ring.buckets = [0; 256];
        }
        ring.wide = 0;
    });
}

fn record(text: &[u8], value: Value) {
    with_ring(|ring| {
        let len = text.len().min(TEXT);
        if ring.count == RING {
            // The oldest entry, which this one replaces, leaves its bucket.
            if let Some(old) = ring.entries[ring.next].value.integer() {
                ring.buckets[bucket(old)] -= 1;
            }
        }
        if let Some(new) = value.integer() {
            ring.buckets[bucket(new)] += 1;
        }
        let entry = &mut ring.entries[ring.next];
        entry.value = value;
        entry.text[..len].copy_from_slice(&text[..len]);
        entry.len = len as u8;
        ring.next = (ring.next + 1) % RING;
        ring.count = (ring.count + 1).min(RING);
    });
}

/// Remembers that `text` converted to the Integer `value`.
pub fn record_integer(text: &[u8], value: u64) {
    record(text, Value::Integer(value));
}

/// Remembers that `text` converted to the Float `value`.
pub fn record_float(text: &[u8], value: f64) {
    record(text, Value::Float(value.to_bits()));
}

/// Remembers that the bytes of `bytes` from `offset`, encoded as
/// `encoding`, were read as the Integer `value`.
pub fn record_read(bytes: &[u8], offset: usize, encoding: Encoding, value: u64) {
    let end = offset + usize::from(encoding.width);
    if end > bytes.len() {
        return;
    }
    let from = offset.saturating_sub(NEIGHBOURS);
    let to = (end + NEIGHBOURS).min(bytes.len());
    let at = (offset - from) as u8;
    record(
        &bytes[from..to],
        Value::Read {
            value,
            at,
            encoding,
        },
    );
}

/// An Integer comparison of `a` with `b` (64-bit patterns).
#[inline(always)]
pub fn integers(site: SiteId, a: u64, b: u64) {
    if a == b {
        return;
    }
    for (mine, other) in [(a, b), (b, a)] {
        if !may_hold_integer(mine) {
            continue;
        }
        let Some(found) = converted(|value| value.integer() == Some(mine)) else {
            continue;
        };
        match found.value {
            Value::Read { at, encoding, .. } => {
                propose_bytes(site, found.text(), at, encoding, other)
            }
            _ => propose(site, found.text(), Digits::decimal(other as i64).as_bytes()),
        }
    }
}

/// Proposes `number`, encoded as `encoding`, in place of the bytes at `at`
/// in `text` (a read and its neighbours).
fn propose_bytes(site: SiteId, text: &[u8], at: u8, encoding: Encoding, number: u64) {
    let Some(encoded) = encoding.encode(number) else {
        return;
    };
    let (at, width) = (usize::from(at), usize::from(encoding.width));
    let mut desired = [0u8; TEXT];
    desired[..text.len()].copy_from_slice(text);
    desired[at..at + width].copy_from_slice(&encoded[..width]);
    compare_sites::bytes_in_slots(site, text, &desired[..text.len()], slots_for(site));
}

/// [`READ_SLOTS`] for a site's first proposal in this input while fewer
/// than [`WIDE_SITES`] sites had theirs, else one.
fn slots_for(site: SiteId) -> usize {
    with_ring(|ring| {
        let index = site.index();
        if ring.wide == WIDE_SITES || ring.wide_sites[..ring.wide].contains(&index) {
            return 1;
        }
        ring.wide_sites[ring.wide] = index;
        ring.wide += 1;
        READ_SLOTS
    })
}

/// A Float comparison (either side may have been an Integer). Reported,
/// with the numbers read from text, the first time the pair is compared at
/// `site` in an epoch.
pub fn floats(site: SiteId, a: f64, b: f64) {
    if a.to_bits() == b.to_bits() || !compare_sites::cmp8(site, a.to_bits(), b.to_bits()) {
        return;
    }
    let mut from_text = false;
    if has_conversions() {
        for (mine, other) in [(a, b), (b, a)] {
            let matches = |value: Value| match value {
                Value::Float(bits) => f64::from_bits(bits) == mine,
                Value::Integer(v) => (v as i64) as f64 == mine,
                Value::Read { .. } => false,
            };
            if let Some(found) = converted(matches) {
                let digits = float_text(other);
                propose(site, found.text(), digits.as_bytes());
                from_text = true;
            }
        }
    }
    if !from_text {
        for value in [a, b] {
            let digits = float_text(value);
            compare_sites::substring(site, &[], digits.as_bytes());
        }
    }
}

/// A String about to be converted by `Integer()` (or `Float()` when
/// `float`): when it holds bytes no number has (letters, punctuation), a
/// byte comparison proposes it with those bytes as digits, so a parser
/// that rejects non-numbers gets numbers. Prefixed radixes (`0x1F`) are
/// left alone.
pub fn check_number_text(site: SiteId, text: &[u8], float: bool) {
    let text = &text[..text.len().min(NUMBER)];
    if let Some(digits) = as_number(text, float) {
        compare_sites::bytes(site, text, digits.as_bytes());
    }
}

/// `text` with the bytes no number has replaced by `1`, or None when
/// there are none (or it is too short, or has a radix prefix).
fn as_number(text: &[u8], float: bool) -> Option<Digits> {
    if text.len() < 2 || matches!(text, [b'0', b'x' | b'X' | b'b' | b'B' | b'o' | b'O', ..]) {
        return None;
    }
    let allowed = |byte: u8| {
        byte.is_ascii_digit()
            || matches!(byte, b'+' | b'-' | b'_' | b' ' | b'\t' | b'\n' | b'\r')
            || (float && matches!(byte, b'.' | b'e' | b'E'))
    };
    if text.iter().all(|&byte| allowed(byte)) {
        return None;
    }
    let mut digits = Digits::new();
    for &byte in text.iter().take(NUMBER) {
        digits.bytes[digits.len] = if allowed(byte) { byte } else { b'1' };
        digits.len += 1;
    }
    Some(digits)
}

/// A copy of the newest remembered conversion whose value `matches`.
fn converted(matches: impl Fn(Value) -> bool) -> Option<Conversion> {
    with_ring(|ring| {
        (0..ring.count)
            .map(|back| ring.entries[(ring.next + RING - 1 - back) % RING])
            .find(|entry| matches(entry.value))
    })
}

impl Conversion {
    fn text(&self) -> &[u8] {
        &self.text[..self.len as usize]
    }
}

/// The shortest decimal text of a Float, as Ruby writes the common ones
/// (`2.5`, `3.0`).
fn float_text(value: f64) -> Digits {
    let mut digits = Digits::new();
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e16 {
        let _ = write!(digits, "{value:.1}");
    } else {
        let _ = write!(digits, "{value}");
    }
    digits
}

/// Proposes `number` in place of the number in `text` (the bytes a
/// conversion read): a byte comparison of the token as the input has it
/// with the same span rewritten, lengths kept equal by borrowing the
/// text's neighbouring bytes or padding the way the token was written.
fn propose(site: SiteId, text: &[u8], number: &[u8]) {
    let (start, end) = token(text);
    let token = &text[start..end];
    let mut existing = [0u8; NUMBER * 2];
    let mut desired = [0u8; NUMBER * 2];
    let n;
    if number.len() <= token.len() {
        // Shorter: pad where the token's own style allows.
        n = token.len();
        let pad = token.len() - number.len();
        existing[..n].copy_from_slice(token);
        if token.first() == Some(&b'0') {
            desired[..pad].fill(b'0');
            desired[pad..n].copy_from_slice(number);
        } else {
            desired[..number.len()].copy_from_slice(number);
            desired[number.len()..n].fill(b' ');
        }
    } else {
        // Longer: take over the bytes after the token, then before it.
        let grow = number.len() - token.len();
        let after = (text.len() - end).min(grow);
        let before = (grow - after).min(start);
        let from = start - before;
        let to = end + after;
        n = (to - from).max(number.len()).min(existing.len());
        existing[..to - from].copy_from_slice(&text[from..to]);
        desired[..number.len().min(n)].copy_from_slice(&number[..number.len().min(n)]);
    }
    compare_sites::bytes(site, &existing[..n], &desired[..n]);
    compare_sites::substring(site, &[], number);
}

/// The span of the number in a conversion's text: an optional sign, then
/// digits, underscores, a decimal point and an exponent.
fn token(text: &[u8]) -> (usize, usize) {
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let mut end = start;
    if matches!(text.get(end), Some(b'+' | b'-')) {
        end += 1;
    }
    while end < text.len() {
        let byte = text[end];
        let exponent_sign = matches!(byte, b'+' | b'-') && matches!(text[end - 1], b'e' | b'E');
        if !(byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.') || exponent_sign) {
            break;
        }
        end += 1;
    }
    if end == start {
        // No number at all: the whole text (bounded) is what to replace.
        return (0, text.len().min(NUMBER));
    }
    (start, end.min(start + NUMBER))
}

/// A number written on the stack.
struct Digits {
    bytes: [u8; NUMBER],
    len: usize,
}

impl Digits {
    fn new() -> Digits {
        Digits {
            bytes: [0; NUMBER],
            len: 0,
        }
    }

    /// `value` in decimal, written without `core::fmt` (this runs on
    /// Integer comparisons).
    fn decimal(value: i64) -> Digits {
        let mut reversed = [0u8; 20];
        let mut n = value.unsigned_abs();
        let mut count = 0;
        loop {
            reversed[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let mut digits = Digits::new();
        if value < 0 {
            let _ = digits.write(b"-");
        }
        for &digit in reversed[..count].iter().rev() {
            let _ = digits.write(&[digit]);
        }
        digits
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Write for Digits {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = NUMBER - self.len;
        let n = buf.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&buf[..n]);
        self.len += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_as_rust_writes_them() {
        for value in [0, 7, -7, 10, 1234567890, i64::MAX, i64::MIN, -(1 << 62)] {
            assert_eq!(
                Digits::decimal(value).as_bytes(),
                value.to_string().as_bytes()
            );
        }
    }

    #[test]
    fn tokens_skip_spaces_and_keep_signs_and_exponents() {
        assert_eq!(token(b"  -42\n"), (2, 5));
        assert_eq!(token(b"1.5e+10x"), (0, 8));
        assert_eq!(token(b"0x1F"), (0, 4));
        assert_eq!(token(b"   "), (0, 3));
    }

    #[test]
    fn floats_are_written_as_ruby_writes_them() {
        assert_eq!(float_text(3.0).as_bytes(), b"3.0");
        assert_eq!(float_text(2.71).as_bytes(), b"2.71");
        assert_eq!(float_text(-0.5).as_bytes(), b"-0.5");
    }

    #[test]
    fn rejected_text_is_proposed_as_digits() {
        let proposed = |text: &[u8], float| as_number(text, float).map(|d| d.as_bytes().to_vec());
        assert_eq!(proposed(b"12ab", false), Some(b"1211".to_vec()));
        assert_eq!(proposed(b"1.5x", true), Some(b"1.51".to_vec()));
        assert_eq!(proposed(b"1.5", false), Some(b"115".to_vec()));
        assert_eq!(proposed(b" 42\n", false), None);
        assert_eq!(proposed(b"0x1F", false), None);
        assert_eq!(proposed(b"a", false), None);
    }

    #[test]
    fn the_ring_finds_the_newest_matching_conversion() {
        let _process = crate::feedback::reset_for_tests();
        record_integer(b"12", 12);
        record_integer(b"0012", 12);
        record_float(b"2.5", 2.5);
        let found = converted(|v| matches!(v, Value::Integer(12)));
        assert_eq!(found.as_ref().map(Conversion::text), Some(&b"0012"[..]));
        before_input();
        assert!(converted(|_| true).is_none());
    }

    #[test]
    fn the_buckets_count_the_integers_the_ring_holds() {
        let _process = crate::feedback::reset_for_tests();
        record_integer(b"300", 300);
        assert!(
            may_hold_integer(300) && may_hold_integer(44),
            "300 and 44 share a bucket"
        );
        assert!(!may_hold_integer(301));
        for value in 0..RING as u64 {
            record_read(b"ab", 0, Encoding::BYTE, value);
        }
        assert!(!may_hold_integer(300), "evicted by the newer reads");
        assert!(may_hold_integer(0) && may_hold_integer(RING as u64 - 1));
        record_float(b"2.5", 2.5);
        assert!(
            !may_hold_integer(0),
            "the oldest read went; a Float has no bucket"
        );
        before_input();
        assert!(!may_hold_integer(1));
    }

    #[test]
    fn a_sites_first_read_proposal_in_an_input_takes_more_slots() {
        let _process = crate::feedback::reset_for_tests();
        let sites: Vec<SiteId> = (0..=WIDE_SITES as u64).map(SiteId::for_id).collect();
        assert_eq!(slots_for(sites[0]), READ_SLOTS);
        assert_eq!(slots_for(sites[0]), 1, "once per site and input");
        for &site in &sites[1..WIDE_SITES] {
            assert_eq!(slots_for(site), READ_SLOTS);
        }
        assert_eq!(slots_for(sites[WIDE_SITES]), 1, "past the sites per input");
        before_input();
        assert_eq!(slots_for(sites[0]), READ_SLOTS, "a new input starts over");
    }

    #[test]
    fn a_read_keeps_its_neighbours_and_where_it_lies() {
        let _process = crate::feedback::reset_for_tests();
        let be16 = Encoding {
            width: 2,
            big_endian: true,
        };
        record_read(b"abcdef", 2, be16, 0x6364);
        record_read(b"abcdef", 0, Encoding::BYTE, 0x61);
        record_read(b"abcdef", 5, Encoding::BYTE, 0x66);
        record_read(b"abc", 2, be16, 0);
        let read = |wanted: u64| {
            let found = converted(|v| matches!(v, Value::Read { value, .. } if value == wanted))?;
            let Value::Read { at, .. } = found.value else {
                return None;
            };
            Some((found.text().to_vec(), at))
        };
        assert_eq!(read(0x6364), Some((b"bcde".to_vec(), 1)));
        assert_eq!(read(0x61), Some((b"ab".to_vec(), 0)));
        assert_eq!(read(0x66), Some((b"ef".to_vec(), 1)));
        assert_eq!(read(0), None, "a read past the end is not remembered");
    }
}

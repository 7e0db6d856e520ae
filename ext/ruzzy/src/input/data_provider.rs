//! How one input is split into typed values, in plain Rust.
//!
//! Bytes and strings come from the front of the input; integers, booleans,
//! floats and choices from the back, so that mutating one byte changes one
//! decision. Two sets of rules turn tail bytes into numbers:
//! - [`Rules::Ruzzy`], Ruzzy 0.8's (the default, so that corpora saved by
//!   0.8 keep their meaning): the last byte is the least significant, signed
//!   integers are two's complement, and an exhausted input gives 0;
//! - [`Rules::Llvm`], LLVM's `FuzzedDataProvider.h` (to share corpora with C
//!   and C++ harnesses): the last byte is the most significant, signed
//!   integers count up from the minimum, an exhausted input gives the minimum.
//!
//! Byte strings, random-length strings, integers in a range and booleans
//! follow the same rules in both.
//!
//! Invariants: `front <= back <= data.len()`; no method panics; the cursors
//! are `Cell`s, so no borrow is held while the binding allocates Ruby objects
//! (a Ruby exception there can leave nothing half-updated).

use std::cell::Cell;
use std::ops::Range;

/// Which bytes-to-numbers rules a provider follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    Ruzzy,
    Llvm,
}

/// A cursor over one input.
pub struct DataProvider {
    data: Box<[u8]>,
    front: Cell<usize>,
    back: Cell<usize>,
    rules: Rules,
}

/// What a bad argument is.
pub type ArgError = String;

/// An unsigned integer read from the back: the bytes it came from, most
/// significant first, so that values wider than 64 bits can be built too.
pub struct TailBytes {
    pub range: Range<usize>,
}

/// A signed integer of `bytes` bytes under Ruzzy 0.8's rules.
pub enum SignedTail {
    /// At most 64 bits of magnitude.
    Small(i128),
    /// `range` holds the bytes, most significant first; `negative` when they
    /// are read as two's complement.
    Wide { range: Range<usize>, negative: bool },
}

/// Where a random-length string comes from and how long it is, worked out
/// before anything is allocated.
pub struct StringPlan {
    start: usize,
    consumed: usize,
    pub len: usize,
    /// Every byte below 0x80.
    pub ascii: bool,
}

/// The width of `max - min` for [`DataProvider::consume_in_range`].
pub enum RangeWidth {
    /// `max - min`, at most 64 bits.
    Narrow(u64),
    /// `max - min` does not fit in 64 bits.
    Wide,
}

impl DataProvider {
    pub fn new(data: Vec<u8>, rules: Rules) -> DataProvider {
        let back = data.len();
        DataProvider {
            data: data.into_boxed_slice(),
            front: Cell::new(0),
            back: Cell::new(back),
            rules,
        }
    }

    pub fn remaining_bytes(&self) -> usize {
        self.back.get() - self.front.get()
    }

    /// The bytes in `range` (a range this provider handed out).
    pub fn bytes(&self, range: Range<usize>) -> &[u8] {
        &self.data[range]
    }

    /// Up to `count` bytes from the front; a negative count takes none.
    pub fn consume_bytes(&self, count: i64) -> Range<usize> {
        let count = usize::try_from(count.max(0))
            .unwrap_or(usize::MAX)
            .min(self.remaining_bytes());
        let start = self.front.get();
        self.front.set(start + count);
        start..start + count
    }

    /// Works out a random-length string of at most `max_length` characters
    /// (none when negative): a backslash followed by anything but a
    /// backslash ends it, `\\` stands for one backslash.
    pub fn plan_random_length_string(&self, max_length: i64) -> StringPlan {
        let start = self.front.get();
        let end = self.back.get();
        let (mut at, mut len, mut ascii) = (start, 0usize, true);
        let mut taken = 0i64;
        while taken < max_length && at < end {
            let mut next = self.data[at];
            at += 1;
            if next == b'\\' && at < end {
                next = self.data[at];
                at += 1;
                if next != b'\\' {
                    break;
                }
            }
            ascii &= next < 0x80;
            len += 1;
            taken += 1;
        }
        StringPlan {
            start,
            consumed: at - start,
            len,
            ascii,
        }
    }

    /// Writes the string `plan` describes into `out` (`plan.len` bytes) and
    /// consumes its bytes.
    pub fn take_random_length_string(&self, plan: &StringPlan, out: &mut [u8]) {
        let source = &self.data[plan.start..plan.start + plan.consumed];
        let mut written = 0;
        let mut i = 0;
        while written < plan.len && i < source.len() {
            let byte = source[i];
            i += if byte == b'\\' { 2 } else { 1 };
            out[written] = byte;
            written += 1;
        }
        self.front.set(plan.start + plan.consumed);
    }

    /// Up to `count` bytes from the back (none when the count is not
    /// positive), most significant first under Ruzzy 0.8's rules.
    pub fn take_tail(&self, count: i64) -> TailBytes {
        let count = usize::try_from(count.max(0))
            .unwrap_or(usize::MAX)
            .min(self.remaining_bytes());
        let end = self.back.get();
        self.back.set(end - count);
        TailBytes {
            range: end - count..end,
        }
    }

    /// The value of tail bytes that fit in 64 bits.
    pub fn tail_value(&self, tail: &TailBytes) -> u64 {
        self.data[tail.range.clone()]
            .iter()
            .fold(0u64, |value, &byte| (value << 8) | u64::from(byte))
    }

    /// An unsigned integer of `count` bytes. Ruzzy 0.8: any count (wider
    /// than 8 bytes comes back as [`TailBytes`] for a Bignum), 0 when the
    /// input is exhausted. LLVM: 0 to 8 bytes.
    pub fn consume_uint(&self, count: i64) -> Result<Result<u64, TailBytes>, ArgError> {
        match self.rules {
            Rules::Ruzzy => {
                let tail = self.take_tail(count);
                if tail.range.len() <= 8 {
                    Ok(Ok(self.tail_value(&tail)))
                } else {
                    Ok(Err(tail))
                }
            }
            Rules::Llvm => {
                let bits = llvm_integer_bits(count)?;
                if bits == 0 {
                    return Ok(Ok(0));
                }
                let max = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                Ok(Ok(self.consume_in_range(RangeWidth::Narrow(max))))
            }
        }
    }

    /// A signed integer of `count` bytes (see [`DataProvider::consume_uint`]).
    pub fn consume_int(&self, count: i64) -> Result<SignedTail, ArgError> {
        match self.rules {
            Rules::Ruzzy => {
                let tail = self.take_tail(count);
                let len = tail.range.len();
                // Fewer bytes than asked for never reach the sign bit.
                let negative = count > 0
                    && len as i64 == count
                    && self
                        .data
                        .get(tail.range.start)
                        .is_some_and(|b| b & 0x80 != 0);
                if len > 8 {
                    return Ok(SignedTail::Wide {
                        range: tail.range,
                        negative,
                    });
                }
                let value = i128::from(self.tail_value(&tail));
                let value = if negative {
                    value - (1i128 << (8 * len))
                } else {
                    value
                };
                Ok(SignedTail::Small(value))
            }
            Rules::Llvm => {
                let bits = llvm_integer_bits(count)?;
                if bits == 0 {
                    return Ok(SignedTail::Small(0));
                }
                let half = 1i128 << (bits - 1);
                let width = (2 * half - 1) as u64;
                let offset = self.consume_in_range(RangeWidth::Narrow(width));
                Ok(SignedTail::Small(-half + i128::from(offset)))
            }
        }
    }

    /// An offset in `0..=max - min` (LLVM's ConsumeIntegralInRange, which
    /// Ruzzy 0.8 follows too): only as many tail bytes as the width needs,
    /// at most 8, the last byte the most significant. A width wider than 64
    /// bits gets the 64-bit value as it is.
    pub fn consume_in_range(&self, width: RangeWidth) -> u64 {
        let (limit, modulus) = match width {
            RangeWidth::Narrow(range) => (range, range.checked_add(1)),
            RangeWidth::Wide => (u64::MAX, None),
        };
        let mut result: u64 = 0;
        let mut offset = 0u32;
        while offset < u64::BITS && (limit >> offset) > 0 && self.remaining_bytes() != 0 {
            let at = self.back.get() - 1;
            self.back.set(at);
            result = (result << 8) | u64::from(self.data[at]);
            offset += 8;
        }
        match modulus {
            Some(modulus) => result % modulus,
            None => result,
        }
    }

    pub fn consume_bool(&self) -> bool {
        self.consume_in_range(RangeWidth::Narrow(255)) & 1 == 1
    }

    /// A Float in 0.0..=1.0 from 8 tail bytes (fewer when the input runs out).
    pub fn consume_probability(&self) -> f64 {
        let value = match self.rules {
            Rules::Ruzzy => {
                let tail = self.take_tail(8);
                self.tail_value(&tail)
            }
            Rules::Llvm => self.consume_in_range(RangeWidth::Narrow(u64::MAX)),
        };
        value as f64 / u64::MAX as f64
    }

    /// A Float in `min..=max` (`min` itself when they are equal).
    pub fn consume_float_in_range(&self, min: f64, max: f64) -> Result<f64, ArgError> {
        if min.is_nan() || max.is_nan() {
            return Err("min and max must be numbers, not NaN".to_owned());
        }
        if min > max {
            return Err(format!("min ({min}) must be <= max ({max})"));
        }
        Ok(match self.rules {
            Rules::Ruzzy => self.ruzzy_float_in_range(min, max),
            Rules::Llvm => self.llvm_float_in_range(min, max),
        })
    }

    /// Ruzzy 0.8: a range too wide for a double is halved, one boolean per
    /// halving choosing the upper or lower half.
    fn ruzzy_float_in_range(&self, mut min: f64, mut max: f64) -> f64 {
        loop {
            if min == max {
                return min;
            }
            let range = max - min;
            if !range.is_infinite() {
                return min + range * self.consume_probability();
            }
            let mid = min / 2.0 + max / 2.0;
            if self.consume_bool() {
                min = mid;
            } else {
                max = mid;
            }
        }
    }

    /// LLVM's ConsumeFloatingPointInRange<double>.
    fn llvm_float_in_range(&self, min: f64, max: f64) -> f64 {
        let mut result = min;
        let range = if max > 0.0 && min < 0.0 && max > min + f64::MAX {
            let half = (max / 2.0) - (min / 2.0);
            if self.consume_bool() {
                result += half;
            }
            half
        } else {
            max - min
        };
        result + range * self.consume_probability()
    }

    /// A finite Float over the whole range of doubles.
    pub fn consume_float(&self) -> f64 {
        self.consume_float_in_range(f64::MIN, f64::MAX)
            .unwrap_or(0.0)
    }

    /// `count` characters taken from the front, as UTF-8. The first byte
    /// picks the alphabet (ASCII, 16-bit or full code points, as in
    /// Atheris); surrogate code points are folded into valid ones unless
    /// `surrogates` asks for them (then the result is not valid UTF-8,
    /// which is the point: code that receives such strings must cope).
    /// A negative count takes nothing.
    pub fn consume_unicode(&self, count: i64, surrogates: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if count <= 0 || self.remaining_bytes() == 0 {
            return out;
        }
        let spec = self.data[self.consume_bytes(1).start];
        let width = match spec & 3 {
            0 | 2 => 1,
            1 => 2,
            _ => 4,
        };
        for _ in 0..count {
            if self.remaining_bytes() < width {
                break;
            }
            let mut raw = [0u8; 4];
            raw[..width].copy_from_slice(self.bytes(self.consume_bytes(width as i64)));
            let code = u32::from_le_bytes(raw);
            let code = match width {
                1 => code & 0x7f,
                2 => code & 0xffff,
                _ => code % 0x11_0000,
            };
            let code = if (0xd800..=0xdfff).contains(&code) && !surrogates {
                code ^ 0x0800
            } else {
                code
            };
            encode_utf8(code, &mut out);
        }
        out
    }
}

/// Bits of an LLVM integral type of `bytes` bytes (0 to 8; fewer than 0 is 0).
fn llvm_integer_bits(bytes: i64) -> Result<u32, ArgError> {
    if bytes > 8 {
        return Err(format!(
            "byte count must be at most 8 with LLVM's rules, got {bytes}"
        ));
    }
    Ok(bytes.max(0) as u32 * 8)
}

/// UTF-8 encoding that also encodes surrogate code points (WTF-8).
fn encode_utf8(code: u32, out: &mut Vec<u8>) {
    match code {
        0..=0x7f => out.push(code as u8),
        0x80..=0x7ff => {
            out.extend_from_slice(&[0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8])
        }
        0x800..=0xffff => out.extend_from_slice(&[
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xf0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ruzzy(bytes: &[u8]) -> DataProvider {
        DataProvider::new(bytes.to_vec(), Rules::Ruzzy)
    }

    fn llvm(bytes: &[u8]) -> DataProvider {
        DataProvider::new(bytes.to_vec(), Rules::Llvm)
    }

    fn small(value: SignedTail) -> i128 {
        match value {
            SignedTail::Small(v) => v,
            SignedTail::Wide { .. } => panic!("expected a small integer"),
        }
    }

    #[test]
    fn ruzzy_integers_take_the_last_byte_as_least_significant() {
        let p = ruzzy(&[0xaa, 0x01, 0x02]);
        assert_eq!(p.consume_uint(2).unwrap().ok(), Some(0x0102));
        assert_eq!(p.remaining_bytes(), 1);
        assert_eq!(small(ruzzy(&[0, 0xff]).consume_int(1).unwrap()), -1);
        assert_eq!(small(ruzzy(&[0xff, 0]).consume_int(2).unwrap()), -256);
        assert_eq!(small(ruzzy(&[0xff]).consume_int(4).unwrap()), 255);
        assert_eq!(small(ruzzy(&[]).consume_int(8).unwrap()), 0);
        assert_eq!(
            small(ruzzy(&[0xff; 8]).consume_int(12).unwrap()),
            i128::from(u64::MAX)
        );
        assert_eq!(ruzzy(&[1]).consume_uint(-3).unwrap().ok(), Some(0));
        assert!(ruzzy(&[1; 12]).consume_uint(9).unwrap().is_err());
    }

    #[test]
    fn llvm_integers_take_the_last_byte_as_most_significant() {
        let p = llvm(&[0xaa, 0x01, 0x02]);
        assert_eq!(p.consume_uint(2).unwrap().ok(), Some(0x0201));
        assert_eq!(small(llvm(&[0]).consume_int(1).unwrap()), -128);
        assert_eq!(small(llvm(&[0xff]).consume_int(1).unwrap()), 127);
        assert_eq!(
            small(llvm(&[]).consume_int(8).unwrap()),
            i128::from(i64::MIN)
        );
        assert!(llvm(&[]).consume_uint(9).is_err());
    }

    #[test]
    fn ranges_take_only_the_bytes_they_need() {
        let p = ruzzy(&[7, 200]);
        assert_eq!(p.consume_in_range(RangeWidth::Narrow(10)), 200 % 11);
        assert_eq!(p.remaining_bytes(), 1);
        assert_eq!(p.consume_in_range(RangeWidth::Narrow(0)), 0);
        assert_eq!(p.remaining_bytes(), 1);
        let wide = ruzzy(&[1; 9]);
        assert_eq!(
            wide.consume_in_range(RangeWidth::Wide),
            0x0101_0101_0101_0101
        );
        assert_eq!(wide.remaining_bytes(), 1);
    }

    #[test]
    fn random_length_strings_stop_at_a_lone_backslash() {
        let p = ruzzy(b"ab\\\\c\\xrest");
        let plan = p.plan_random_length_string(100);
        let mut out = vec![0; plan.len];
        p.take_random_length_string(&plan, &mut out);
        assert_eq!(out, b"ab\\c".to_vec());
        assert_eq!(p.bytes(p.consume_bytes(4)), b"rest");
        assert_eq!(ruzzy(b"abc").plan_random_length_string(-1).len, 0);
    }

    #[test]
    fn floats_stay_in_range() {
        let p = ruzzy(&[0xff; 16]);
        assert_eq!(p.consume_probability(), 1.0);
        let x = p.consume_float_in_range(-1.5, 2.5).unwrap();
        assert!((-1.5..=2.5).contains(&x));
        assert_eq!(ruzzy(&[]).consume_float_in_range(3.0, 9.0), Ok(3.0));
        assert!(ruzzy(&[]).consume_float_in_range(1.0, f64::NAN).is_err());
        assert!(ruzzy(&[0x80; 9]).consume_float().is_finite());
        assert!(llvm(&[0x80; 9]).consume_float().is_finite());
    }

    #[test]
    fn unicode_is_valid_utf8_unless_surrogates_are_asked_for() {
        let bytes = [3u8, 0x00, 0xd8, 0x00, 0x00];
        let clean = ruzzy(&bytes).consume_unicode(1, false);
        assert!(std::str::from_utf8(&clean).is_ok());
        let raw = ruzzy(&bytes).consume_unicode(1, true);
        assert_eq!(raw, vec![0xed, 0xa0, 0x80]);
        assert_eq!(
            ruzzy(&[0, b'h', b'i']).consume_unicode(5, false),
            b"hi".to_vec()
        );
    }
}

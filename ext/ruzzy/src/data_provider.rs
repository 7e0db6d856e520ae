//! The byte-splitting rules of LLVM's `FuzzedDataProvider.h`, in plain Rust.
//!
//! Bytes and strings come from the front of the input; integers, booleans,
//! floats and choices from the back, so that mutating one byte changes one
//! decision. When the input runs out, integers fall back to the low end of
//! their range (and floats to the low end of theirs), as in LLVM.
//!
//! Invariants: `front <= back <= data.len()`; no method panics; argument
//! errors come back as `Err(message)`.

/// A cursor over one input.
pub struct DataProvider {
    data: Vec<u8>,
    front: usize,
    back: usize,
}

/// What a bad argument is.
pub type ArgError = String;

impl DataProvider {
    pub fn new(data: Vec<u8>) -> DataProvider {
        let back = data.len();
        DataProvider {
            data,
            front: 0,
            back,
        }
    }

    pub fn remaining_bytes(&self) -> usize {
        self.back - self.front
    }

    /// Up to `count` bytes from the front.
    pub fn consume_bytes(&mut self, count: i64) -> Result<&[u8], ArgError> {
        if count < 0 {
            return Err(format!("count must not be negative, got {count}"));
        }
        let count = (count as u64).min(self.remaining_bytes() as u64) as usize;
        let start = self.front;
        self.front += count;
        Ok(&self.data[start..start + count])
    }

    /// LLVM's ConsumeRandomLengthString: a backslash followed by anything
    /// but a backslash ends the string; `\\` is one backslash.
    pub fn consume_random_length_string(&mut self, max_length: i64) -> Result<Vec<u8>, ArgError> {
        if max_length < 0 {
            return Err(format!("max_length must not be negative, got {max_length}"));
        }
        let mut result = Vec::with_capacity((max_length as usize).min(self.remaining_bytes()));
        let mut taken = 0i64;
        while taken < max_length && self.remaining_bytes() != 0 {
            let mut next = self.take_front();
            if next == b'\\' && self.remaining_bytes() != 0 {
                next = self.take_front();
                if next != b'\\' {
                    break;
                }
            }
            result.push(next);
            taken += 1;
        }
        Ok(result)
    }

    fn take_front(&mut self) -> u8 {
        let byte = self.data[self.front];
        self.front += 1;
        byte
    }

    /// LLVM's ConsumeIntegralInRange for ranges up to 64 bits wide.
    pub fn consume_integral_in_range(&mut self, min: i128, max: i128) -> Result<i128, ArgError> {
        if min > max {
            return Err(format!("min ({min}) must be <= max ({max})"));
        }
        let range = (max - min) as u128;
        if range > u64::MAX as u128 {
            return Err(format!("the range {min}..{max} is wider than 64 bits"));
        }
        let range = range as u64;
        let mut result: u64 = 0;
        let mut offset = 0u32;
        while offset < u64::BITS && (range >> offset) > 0 && self.remaining_bytes() != 0 {
            self.back -= 1;
            result = (result << 8) | u64::from(self.data[self.back]);
            offset += 8;
        }
        if range != u64::MAX {
            result %= range + 1;
        }
        Ok(min + i128::from(result))
    }

    /// LLVM's ConsumeIntegral for an unsigned integer of `bytes` bytes.
    pub fn consume_uint(&mut self, bytes: i64) -> Result<u64, ArgError> {
        let bits = integer_bits(bytes)?;
        if bits == 0 {
            return Ok(0);
        }
        let max = if bits == 64 {
            u64::MAX as i128
        } else {
            (1i128 << bits) - 1
        };
        Ok(self.consume_integral_in_range(0, max)? as u64)
    }

    /// LLVM's ConsumeIntegral for a signed integer of `bytes` bytes.
    pub fn consume_int(&mut self, bytes: i64) -> Result<i64, ArgError> {
        let bits = integer_bits(bytes)?;
        if bits == 0 {
            return Ok(0);
        }
        let half = 1i128 << (bits - 1);
        Ok(self.consume_integral_in_range(-half, half - 1)? as i64)
    }

    pub fn consume_bool(&mut self) -> bool {
        self.consume_uint(1).unwrap_or(0) & 1 == 1
    }

    /// A float in [0, 1] from 8 bytes (LLVM's ConsumeProbability<double>).
    pub fn consume_probability(&mut self) -> f64 {
        let value = self
            .consume_integral_in_range(0, u64::MAX as i128)
            .unwrap_or(0) as u64;
        value as f64 / u64::MAX as f64
    }

    /// LLVM's ConsumeFloatingPointInRange<double>.
    pub fn consume_float_in_range(&mut self, min: f64, max: f64) -> Result<f64, ArgError> {
        if min.is_nan() || max.is_nan() {
            return Err("min and max must be numbers, not NaN".to_owned());
        }
        if min > max {
            return Err(format!("min ({min}) must be <= max ({max})"));
        }
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
        Ok(result + range * self.consume_probability())
    }

    /// LLVM's ConsumeFloatingPoint<double>: the whole finite range.
    pub fn consume_float(&mut self) -> f64 {
        self.consume_float_in_range(f64::MIN, f64::MAX)
            .unwrap_or(0.0)
    }

    /// `count` characters taken from the front, as UTF-8. The first byte
    /// picks the alphabet (ASCII, 16-bit or full code points, as in
    /// Atheris); surrogate code points are folded into valid ones unless
    /// `surrogates` asks for them (then the result is not valid UTF-8,
    /// which is the point: code that receives such strings must cope).
    pub fn consume_unicode(&mut self, count: i64, surrogates: bool) -> Result<Vec<u8>, ArgError> {
        if count < 0 {
            return Err(format!("count must not be negative, got {count}"));
        }
        let mut out = Vec::new();
        if count == 0 || self.remaining_bytes() == 0 {
            return Ok(out);
        }
        let spec = self.take_front();
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
            raw[..width].copy_from_slice(&self.data[self.front..self.front + width]);
            self.front += width;
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
        Ok(out)
    }
}

fn integer_bits(bytes: i64) -> Result<u32, ArgError> {
    if !(0..=8).contains(&bytes) {
        return Err(format!("byte count must be between 0 and 8, got {bytes}"));
    }
    Ok(bytes as u32 * 8)
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

    fn provider(bytes: &[u8]) -> DataProvider {
        DataProvider::new(bytes.to_vec())
    }

    #[test]
    fn integers_come_from_the_back_most_significant_first() {
        let mut p = provider(&[0xaa, 0x01, 0x02]);
        assert_eq!(p.consume_uint(2), Ok(0x0201));
        assert_eq!(p.remaining_bytes(), 1);
        assert_eq!(p.consume_bytes(5).map(<[u8]>::to_vec), Ok(vec![0xaa]));
        assert_eq!(p.consume_uint(4), Ok(0));
    }

    #[test]
    fn ranges_take_only_the_bytes_they_need() {
        let mut p = provider(&[7, 200]);
        assert_eq!(p.consume_integral_in_range(10, 20), Ok(10 + 200 % 11));
        assert_eq!(p.remaining_bytes(), 1);
        assert_eq!(p.consume_integral_in_range(5, 5), Ok(5));
        assert_eq!(p.remaining_bytes(), 1);
        assert!(p.consume_integral_in_range(2, 1).is_err());
    }

    #[test]
    fn signed_integers_are_offset_from_the_minimum() {
        assert_eq!(provider(&[0]).consume_int(1), Ok(-128));
        assert_eq!(provider(&[0xff]).consume_int(1), Ok(127));
        assert_eq!(provider(&[]).consume_int(8), Ok(i64::MIN));
    }

    #[test]
    fn random_length_strings_stop_at_a_lone_backslash() {
        let mut p = provider(b"ab\\\\c\\xrest");
        assert_eq!(p.consume_random_length_string(100), Ok(b"ab\\c".to_vec()));
        assert_eq!(p.consume_bytes(4).map(<[u8]>::to_vec), Ok(b"rest".to_vec()));
    }

    #[test]
    fn floats_stay_in_range() {
        let mut p = provider(&[0xff; 16]);
        assert_eq!(p.consume_probability(), 1.0);
        let x = p.consume_float_in_range(-1.5, 2.5).unwrap();
        assert!((-1.5..=2.5).contains(&x));
        assert_eq!(provider(&[]).consume_float_in_range(3.0, 9.0), Ok(3.0));
        assert!(provider(&[]).consume_float_in_range(1.0, f64::NAN).is_err());
        assert!(provider(&[0x80; 9]).consume_float().is_finite());
    }

    #[test]
    fn unicode_is_valid_utf8_unless_surrogates_are_asked_for() {
        let bytes = [3u8, 0x00, 0xd8, 0x00, 0x00];
        let clean = provider(&bytes).consume_unicode(1, false).unwrap();
        assert!(std::str::from_utf8(&clean).is_ok());
        let raw = provider(&bytes).consume_unicode(1, true).unwrap();
        assert_eq!(raw, vec![0xed, 0xa0, 0x80]);
        assert_eq!(
            provider(&[0, b'h', b'i']).consume_unicode(5, false),
            Ok(b"hi".to_vec())
        );
    }
}

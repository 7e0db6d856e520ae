//! Where the Integers that `String#unpack` and `unpack1` read lie in the
//! String: the integer directives at the start of a format, each value's
//! offset and [`Encoding`] (width and byte order), as Ruby's `pack.c`
//! reads them. The reads are remembered by [`crate::feedback::numbers`],
//! which proposes other bytes in their place when the number is compared.
//!
//! Invariants: pure functions of a format and a length; nothing allocates.
//! A directive this module does not know ends the walk (never a guess).

use std::ffi::{c_int, c_long};
use std::mem::size_of;

/// How a number is stored: its width in bytes and its byte order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Encoding {
    pub width: u8,
    pub big_endian: bool,
}

impl Encoding {
    /// One byte (`getbyte`, `C`).
    pub const BYTE: Encoding = Encoding {
        width: 1,
        big_endian: false,
    };

    /// The bytes of `value` (a 64-bit pattern) in this encoding, in the
    /// first `width` bytes of the array; None when it fits the width
    /// neither as a signed nor as an unsigned number.
    pub fn encode(self, value: u64) -> Option<[u8; 8]> {
        let width = usize::from(self.width);
        if width < 8 {
            let bits = 8 * width as u32;
            let signed = value as i64;
            let fits = (value >> bits) == 0 || (signed >> (bits - 1)) == -1;
            if !fits {
                return None;
            }
        }
        let mut bytes = [0u8; 8];
        if self.big_endian {
            bytes[..width].copy_from_slice(&value.to_be_bytes()[8 - width..]);
        } else {
            bytes[..width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
        Some(bytes)
    }
}

/// The offsets and encodings of the Integers an unpack of a String of
/// `len` bytes with `format` returns first, in order, up to the first
/// directive that is not an integer one (or a value past the end).
pub struct Directives<'a> {
    format: &'a [u8],
    pos: usize,
    offset: usize,
    len: usize,
    current: Encoding,
    repeat: usize,
}

impl<'a> Directives<'a> {
    pub fn new(format: &'a [u8], len: usize) -> Directives<'a> {
        Directives {
            format,
            pos: 0,
            offset: 0,
            len,
            current: Encoding::BYTE,
            repeat: 0,
        }
    }

    /// Reads the next directive; false at the end or at one not known.
    fn directive(&mut self) -> bool {
        while self
            .format
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        let Some(&letter) = self.format.get(self.pos) else {
            return false;
        };
        self.pos += 1;
        let (mut native, mut order) = (false, None);
        while let Some(&modifier) = self.format.get(self.pos) {
            match modifier {
                b'_' | b'!' => native = true,
                b'<' => order = Some(false),
                b'>' => order = Some(true),
                _ => break,
            }
            self.pos += 1;
        }
        let Some(count) = self.count() else {
            return false;
        };
        let width = match letter {
            b'C' | b'c' => 1,
            b'S' | b's' if native => size_of::<std::ffi::c_short>(),
            b'S' | b's' | b'n' | b'v' => 2,
            b'L' | b'l' if native => size_of::<c_long>(),
            b'L' | b'l' | b'N' | b'V' => 4,
            b'I' | b'i' => size_of::<c_int>(),
            b'Q' | b'q' => 8,
            b'J' | b'j' => size_of::<usize>(),
            b'x' => {
                // Skips bytes forward (a whole count only).
                if count == usize::MAX {
                    return false;
                }
                self.offset = self.offset.saturating_add(count);
                return self.directive();
            }
            _ => return false,
        };
        let big_endian = match letter {
            b'n' | b'N' => true,
            b'v' | b'V' => false,
            _ => order.unwrap_or(cfg!(target_endian = "big")),
        };
        self.current = Encoding {
            width: width as u8,
            big_endian,
        };
        self.repeat = count;
        true
    }

    /// A directive's count: digits, `*` (as many as the bytes hold:
    /// `usize::MAX`) or none (1); None for a count too large to be real.
    fn count(&mut self) -> Option<usize> {
        if self.format.get(self.pos) == Some(&b'*') {
            self.pos += 1;
            return Some(usize::MAX);
        }
        let start = self.pos;
        while self.format.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        if start == self.pos {
            return Some(1);
        }
        std::str::from_utf8(&self.format[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }
}

impl Iterator for Directives<'_> {
    /// The offset of a value's bytes, and their encoding.
    type Item = (usize, Encoding);

    fn next(&mut self) -> Option<(usize, Encoding)> {
        while self.repeat == 0 {
            if !self.directive() {
                return None;
            }
        }
        let width = usize::from(self.current.width);
        let end = self.offset.checked_add(width)?;
        if end > self.len {
            return None;
        }
        let at = self.offset;
        self.offset = end;
        self.repeat -= 1;
        Some((at, self.current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LE: bool = cfg!(target_endian = "little");

    fn walk(format: &str, len: usize) -> Vec<(usize, u8, bool)> {
        Directives::new(format.as_bytes(), len)
            .map(|(at, e)| (at, e.width, e.big_endian))
            .collect()
    }

    #[test]
    fn directives_give_offsets_widths_and_byte_orders() {
        assert_eq!(
            walk("NnC", 16),
            vec![(0, 4, true), (4, 2, true), (6, 1, !LE)]
        );
        assert_eq!(walk("L<L<", 8), vec![(0, 4, false), (4, 4, false)]);
        assert_eq!(
            walk("v V Q>", 20),
            vec![(0, 2, false), (2, 4, false), (6, 8, true)]
        );
        assert_eq!(walk("S_l!", 20), vec![(0, 2, !LE), (2, 8, !LE)]);
    }

    #[test]
    fn counts_stars_and_skips() {
        assert_eq!(walk("C*", 3), vec![(0, 1, !LE), (1, 1, !LE), (2, 1, !LE)]);
        assert_eq!(walk("n2", 10), vec![(0, 2, true), (2, 2, true)]);
        assert_eq!(walk("x3N", 10), vec![(3, 4, true)]);
    }

    #[test]
    fn the_walk_ends_at_an_unknown_directive_or_the_end_of_the_bytes() {
        assert_eq!(walk("Ca3C", 10), vec![(0, 1, !LE)]);
        assert_eq!(walk("N", 3), vec![]);
        assert_eq!(walk("C3", 2).len(), 2);
        assert_eq!(walk("", 4), vec![]);
        assert_eq!(walk("x*C", 4), vec![]);
        assert_eq!(walk("C99999999999999999999999", 4), vec![]);
    }

    #[test]
    fn values_are_encoded_when_they_fit() {
        let be16 = Encoding {
            width: 2,
            big_endian: true,
        };
        assert_eq!(
            be16.encode(0x1234).map(|b| [b[0], b[1]]),
            Some([0x12, 0x34])
        );
        assert_eq!(
            be16.encode(-2i64 as u64).map(|b| [b[0], b[1]]),
            Some([0xff, 0xfe])
        );
        assert_eq!(be16.encode(0x1_0000), None);
        assert_eq!(Encoding::BYTE.encode(0xff).map(|b| b[0]), Some(0xff));
        assert_eq!(Encoding::BYTE.encode(256), None);
        assert_eq!(
            Encoding::BYTE.encode(-128i64 as u64).map(|b| b[0]),
            Some(0x80)
        );
        assert_eq!(Encoding::BYTE.encode(-129i64 as u64), None);
        let le64 = Encoding {
            width: 8,
            big_endian: false,
        };
        assert_eq!(le64.encode(u64::MAX), Some([0xff; 8]));
    }
}

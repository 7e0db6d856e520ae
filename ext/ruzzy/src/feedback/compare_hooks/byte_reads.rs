//! Numbers read from a String's bytes (see `feedback::numbers` for what is
//! reported when they are compared): `StringByteReadHooks` (prepended to
//! String, group `conversion`) records what `getbyte`, `bytes`, `unpack1`
//! and `unpack` read and made, after `super`, from the String as it is
//! then.
//!
//! `unpack1` and `unpack` are recorded only without the `offset:` keyword,
//! for the integer directives at the start of the format; at most
//! [`READS_PER_CALL`] values of one `unpack` or `bytes` (the first ones), so
//! that a long `C*` does not push every other number out of the ring.
//!
//! Fast path: `getbyte` of a String with a Fixnum index (binary parsers
//! call it once per byte) answers as Ruby's own `rb_str_getbyte` does.

use super::{builtin, FastPath, Hook, HookModule};
use crate::feedback::numbers;
use crate::feedback::unpack_format::{Directives, Encoding};
use crate::rb::method::Function;
use crate::rb::value::{
    array_entry, array_len, fixnum, fixnum_value, integer_bits, MethodCall, QNIL,
};
use rb_sys::VALUE;
use std::ffi::c_int;

/// The values of one `unpack` remembered at most.
const READS_PER_CALL: usize = 8;

pub const HOOKS: HookModule = HookModule {
    group: "conversion",
    class: c"String",
    module: "StringByteReadHooks",
    hooks: &[
        Hook::new(&[c"getbyte"], Function::One(getbyte)).fast(FastPath::StringGetbyte),
        Hook::new(&[c"bytes"], Function::Var(bytes)),
        Hook::new(&[c"unpack1"], Function::Var(unpack1)),
        Hook::new(&[c"unpack"], Function::Var(unpack)),
    ],
};

/// `String#getbyte(index)`.
unsafe extern "C" fn getbyte(this: VALUE, index: VALUE) -> VALUE {
    let args = [index];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    if builtin(FastPath::StringGetbyte) {
        if let (Some(index), Some(bytes)) = (fixnum_value(index), call.string_bytes(this)) {
            let Some(offset) = offset_of(index, bytes.len()) else {
                return QNIL;
            };
            let byte = bytes[offset];
            numbers::record_read(bytes, offset, Encoding::BYTE, u64::from(byte));
            if let Some(value) = fixnum(i64::from(byte)) {
                return value;
            }
        }
    }
    let result = call.call_super();
    if let (Some(value), Some(index), Some(bytes)) = (
        fixnum_value(result),
        fixnum_value(index),
        call.string_bytes(this),
    ) {
        if let Some(offset) = offset_of(index, bytes.len()) {
            numbers::record_read(bytes, offset, Encoding::BYTE, value as u64);
        }
    }
    result
}

/// The offset `getbyte(index)` reads in a String of `len` bytes (a
/// negative index counts from the end), or None past either end.
fn offset_of(index: i64, len: usize) -> Option<usize> {
    let offset = if index < 0 {
        index.checked_add(len as i64)?
    } else {
        index
    };
    usize::try_from(offset).ok().filter(|&offset| offset < len)
}

/// `String#bytes` (without a block, which returns the String).
unsafe extern "C" fn bytes(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = call.call_super();
    if let Some(bytes) = call.string_bytes(this) {
        let reads = (0..bytes.len()).map(|offset| (offset, Encoding::BYTE));
        record_elements(bytes, result, reads);
    }
    result
}

/// `String#unpack1(format)`.
unsafe extern "C" fn unpack1(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = call.call_super();
    if let ([format], Some(value)) = (call.args(), integer_bits(result)) {
        if let (Some(format), Some(bytes)) = (call.string_bytes(*format), call.string_bytes(this)) {
            if let Some((offset, encoding)) = Directives::new(format, bytes.len()).next() {
                numbers::record_read(bytes, offset, encoding, value);
            }
        }
    }
    result
}

/// `String#unpack(format)` (without a block, which returns nil).
unsafe extern "C" fn unpack(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = call.call_super();
    if let [format] = call.args() {
        if let (Some(format), Some(bytes)) = (call.string_bytes(*format), call.string_bytes(this)) {
            record_elements(bytes, result, Directives::new(format, bytes.len()));
        }
    }
    result
}

/// Records the Integers at the start of `result` (when it is an Array;
/// at most [`READS_PER_CALL`]), read from `bytes` where `reads` says.
fn record_elements(bytes: &[u8], result: VALUE, reads: impl Iterator<Item = (usize, Encoding)>) {
    let Some(len) = array_len(result) else {
        return;
    };
    for (index, (offset, encoding)) in reads.take(len.min(READS_PER_CALL)).enumerate() {
        // SAFETY: `result` is an Array (its length was read above).
        if let Some(value) = integer_bits(unsafe { array_entry(result, index) }) {
            numbers::record_read(bytes, offset, encoding, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::offset_of;

    #[test]
    fn getbyte_offsets_count_negative_indexes_from_the_end() {
        assert_eq!(offset_of(0, 3), Some(0));
        assert_eq!(offset_of(2, 3), Some(2));
        assert_eq!(offset_of(3, 3), None);
        assert_eq!(offset_of(-1, 3), Some(2));
        assert_eq!(offset_of(-3, 3), Some(0));
        assert_eq!(offset_of(-4, 3), None);
        assert_eq!(offset_of(i64::MIN, 3), None);
        assert_eq!(offset_of(0, 0), None);
    }
}

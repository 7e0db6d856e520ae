//! Reading Ruby values from native code without running Ruby code, and the
//! tokens that say how long what is read stays valid.
//!
//! A String's bytes stay where they are only until Ruby code runs (which
//! may modify the String, or let the GC free or compact it). [`Frame`]
//! stands for a native call in progress during which no Ruby code runs:
//! bytes read through it borrow it. [`MethodCall`] is a native method call
//! with its arguments; calling `super` from it takes it mutably, so the
//! compiler rejects any byte slice still alive across the call.
//!
//! Invariants: nothing here allocates, raises or takes a lock, except
//! [`MethodCall::call_super`], which runs Ruby code; used with the GVL held.

use rb_sys::{ruby_special_consts, ruby_value_type, VALUE};
use std::ffi::c_int;
use std::marker::PhantomData;

pub const QNIL: VALUE = ruby_special_consts::RUBY_Qnil as VALUE;
pub const QTRUE: VALUE = ruby_special_consts::RUBY_Qtrue as VALUE;
pub const QFALSE: VALUE = ruby_special_consts::RUBY_Qfalse as VALUE;
pub const QUNDEF: VALUE = ruby_special_consts::RUBY_Qundef as VALUE;

/// A native call in progress (a C method, an event hook, a function called
/// from Ruby) during which no Ruby code runs while it is borrowed.
pub struct Frame {
    /// Neither Send nor Sync: a frame belongs to the thread holding the GVL.
    _gvl: PhantomData<*mut ()>,
}

impl Frame {
    /// # Safety
    /// Called on the thread holding the GVL, inside a native call made by
    /// the interpreter, and no Ruby code runs while the frame is borrowed
    /// (only [`MethodCall`] runs Ruby code, and it needs `&mut`).
    #[inline(always)]
    pub unsafe fn enter() -> Frame {
        Frame { _gvl: PhantomData }
    }

    /// The bytes of a String (of any class), or None for anything else.
    #[inline(always)]
    pub fn string_bytes(&self, value: VALUE) -> Option<&[u8]> {
        // SAFETY: the type is checked before the String is read; the bytes
        // stay valid while `self` is borrowed (no Ruby code runs).
        unsafe {
            if rb_sys::SPECIAL_CONST_P(value)
                || !rb_sys::RB_TYPE_P(value, ruby_value_type::RUBY_T_STRING)
            {
                return None;
            }
            let len = rb_sys::RSTRING_LEN(value) as usize;
            let ptr = rb_sys::RSTRING_PTR(value) as *const u8;
            Some(std::slice::from_raw_parts(ptr, len))
        }
    }

    /// The name of a Symbol, or None for anything else.
    #[inline(always)]
    pub fn symbol_name(&self, value: VALUE) -> Option<&[u8]> {
        if !is_symbol(value) {
            return None;
        }
        // SAFETY: a Symbol: rb_sym2str returns its frozen name without
        // allocating.
        self.string_bytes(unsafe { rb_sys::rb_sym2str(value) })
    }

    /// The bytes of a String, or the name of a Symbol.
    #[inline(always)]
    pub fn text_bytes(&self, value: VALUE) -> Option<&[u8]> {
        self.string_bytes(value).or_else(|| self.symbol_name(value))
    }
}

/// A C method call in progress, with its arguments.
pub struct MethodCall<'a> {
    frame: Frame,
    args: &'a [VALUE],
}

impl<'a> MethodCall<'a> {
    /// A method of arity -1: `argv` holds `argc` values.
    ///
    /// # Safety
    /// As for [`Frame::enter`], inside the C method that received `argc`
    /// and `argv` from the interpreter.
    #[inline(always)]
    pub unsafe fn variadic(argc: c_int, argv: *const VALUE) -> MethodCall<'a> {
        let args = if argc <= 0 || argv.is_null() {
            &[]
        } else {
            // SAFETY: by the caller's contract, Ruby's arity -1 convention.
            unsafe { std::slice::from_raw_parts(argv, argc as usize) }
        };
        // SAFETY: by the caller's contract.
        unsafe { MethodCall::with_args(args) }
    }

    /// A method of fixed arity whose arguments are `args`.
    ///
    /// # Safety
    /// As for [`Frame::enter`], inside the C method whose arguments are
    /// `args`.
    #[inline(always)]
    pub unsafe fn with_args(args: &'a [VALUE]) -> MethodCall<'a> {
        MethodCall {
            // SAFETY: by the caller's contract.
            frame: unsafe { Frame::enter() },
            args,
        }
    }

    /// The method's arguments (they stay valid across `super`).
    #[inline(always)]
    pub fn args(&self) -> &'a [VALUE] {
        self.args
    }

    /// The first argument, or nil without arguments.
    #[inline(always)]
    pub fn first(&self) -> VALUE {
        self.args.first().copied().unwrap_or(QNIL)
    }

    /// `super` with the method's own arguments, block and keywords. Runs
    /// Ruby code: nothing read through this call may be alive (`&mut`).
    /// A Ruby exception unwinds through the caller, which must own nothing
    /// that needs dropping.
    #[inline(always)]
    pub fn call_super(&mut self) -> VALUE {
        // SAFETY: by the constructor's contract, inside the C method these are the arguments
        // of; the keyword flag is the current call's.
        unsafe {
            let keywords = rb_sys::rb_keyword_given_p();
            rb_sys::rb_call_super_kw(self.args.len() as c_int, self.args.as_ptr(), keywords)
        }
    }
}

impl MethodCall<'_> {
    /// `$~` of the Ruby code calling this method (C methods share their
    /// caller's special variables).
    #[inline(always)]
    pub fn last_match(&self) -> VALUE {
        // SAFETY: inside a C method call (constructor); reads a frame slot.
        unsafe { rb_sys::rb_backref_get() }
    }

    /// Ruby's own `Hash#[]` (`rb_hash_aref`) on `hash`, in place of
    /// `super` while the method is still Ruby's own. Runs Ruby code (`hash`,
    /// `eql?`, a default proc) as `Hash#[]` does, so it takes the call
    /// mutably; an exception unwinds through the caller, as from
    /// [`call_super`](Self::call_super).
    ///
    /// # Safety
    /// `hash` is a Hash.
    #[inline(always)]
    pub unsafe fn hash_aref(&mut self, hash: VALUE, key: VALUE) -> VALUE {
        // SAFETY: by the caller's contract, inside the C method call
        // (constructor).
        unsafe { rb_sys::rb_hash_aref(hash, key) }
    }

    /// Ruby's own `Regexp#=~` (`rb_reg_match`, the method's own C
    /// function in Ruby 3.1, 3.3 and 3.4) in place of `super` while it is
    /// Ruby's own. Sets `$~` in the caller's frame, as the method does;
    /// runs Ruby code (`to_str`) as it does.
    ///
    /// # Safety
    /// `regexp` is a Regexp.
    #[inline(always)]
    pub unsafe fn regexp_match_operator(&mut self, regexp: VALUE, subject: VALUE) -> VALUE {
        // SAFETY: by the caller's contract, inside the C method call.
        unsafe { rb_sys::rb_reg_match(regexp, subject) }
    }

    /// Ruby's own `Regexp#===` on a String (`rb_reg_eqq` after its operand
    /// check, in Ruby 3.1, 3.3 and 3.4: whether `rb_reg_search` from 0
    /// matched, `$~` set by the search).
    ///
    /// # Safety
    /// `regexp` is a Regexp and `string` a String.
    #[inline(always)]
    pub unsafe fn regexp_case_equality(&mut self, regexp: VALUE, string: VALUE) -> VALUE {
        // SAFETY: by the caller's contract, inside the C method call.
        boolean(unsafe { rb_sys::rb_reg_search(regexp, string, 0, 0) } >= 0)
    }

    /// Ruby's own `String#to_i(base)` for a base Ruby accepts (0 to 36,
    /// not 1): `rb_str_to_inum(string, base, FALSE)`, as `rb_str_to_i`.
    ///
    /// # Safety
    /// `string` is a String and `base` 0 or 2 to 36.
    #[inline(always)]
    pub unsafe fn string_to_i(&mut self, string: VALUE, base: c_int) -> VALUE {
        // SAFETY: by the caller's contract, inside the C method call.
        unsafe { rb_sys::rb_str_to_inum(string, base, 0) }
    }

    /// Ruby's own `String#to_f`: `DBL2NUM(rb_str_to_dbl(string, FALSE))`,
    /// as `rb_str_to_f`.
    ///
    /// # Safety
    /// `string` is a String.
    #[inline(always)]
    pub unsafe fn string_to_f(&mut self, string: VALUE) -> VALUE {
        // SAFETY: by the caller's contract, inside the C method call.
        unsafe { rb_sys::rb_float_new(rb_sys::rb_str_to_dbl(string, 0)) }
    }

    /// Calls the method `id` of `receiver` without arguments under
    /// `rb_protect`: an exception comes back as `Err`. Runs Ruby code.
    pub fn send(&mut self, receiver: VALUE, id: rb_sys::ID) -> Result<VALUE, VALUE> {
        super::protect(|ruby| ruby.call(receiver, id, &[]))
    }
}

impl std::ops::Deref for MethodCall<'_> {
    type Target = Frame;

    fn deref(&self) -> &Frame {
        &self.frame
    }
}

/// Whether `value` is a Symbol (static or dynamic).
#[inline(always)]
pub fn is_symbol(value: VALUE) -> bool {
    // SAFETY: type checks read the value's tag or header only.
    unsafe { rb_sys::STATIC_SYM_P(value) || rb_sys::RB_DYNAMIC_SYM_P(value) }
}

/// Whether `value` is a Fixnum.
#[inline(always)]
pub fn is_fixnum(value: VALUE) -> bool {
    rb_sys::FIXNUM_P(value)
}

/// The value of a Fixnum.
#[inline(always)]
pub fn fixnum_value(value: VALUE) -> Option<i64> {
    // SAFETY: checked to be a Fixnum first.
    is_fixnum(value).then(|| unsafe { rb_sys::FIX2LONG(value) } as i64)
}

/// Whether `value` is an Integer (a Fixnum or a Bignum).
#[inline(always)]
pub fn is_integer(value: VALUE) -> bool {
    // SAFETY: a type check on a live VALUE reads only its header.
    unsafe { rb_sys::RB_INTEGER_TYPE_P(value) }
}

/// Whether `value` is a heap object of type `kind`.
#[inline(always)]
pub fn has_type(value: VALUE, kind: ruby_value_type) -> bool {
    // SAFETY: special constants are excluded before the header is read.
    !rb_sys::SPECIAL_CONST_P(value) && unsafe { rb_sys::RB_TYPE_P(value, kind) }
}

/// The value of an Integer that fits in 64 bits (signed or unsigned).
#[inline(always)]
pub fn integer_bits(value: VALUE) -> Option<u64> {
    if let Some(fixnum) = fixnum_value(value) {
        return Some(fixnum as u64);
    }
    if !has_type(value, ruby_value_type::RUBY_T_BIGNUM) {
        return None;
    }
    // SAFETY: a Bignum; reads its length and top digit only. A magnitude
    // wider than 8 bytes cannot fit (an IPv6 address is not packed).
    if unsafe { rb_sys::rb_absint_size(value, std::ptr::null_mut()) } > 8 {
        return None;
    }
    let mut word: u64 = 0;
    // SAFETY: packs into one 8-byte word; never raises for a Bignum; the
    // result's magnitude says whether it overflowed.
    let sign = unsafe {
        rb_sys::rb_integer_pack(
            value,
            (&mut word as *mut u64).cast(),
            1,
            8,
            0,
            (rb_sys::INTEGER_PACK_LSWORD_FIRST
                | rb_sys::INTEGER_PACK_NATIVE_BYTE_ORDER
                | rb_sys::INTEGER_PACK_2COMP) as c_int,
        )
    };
    (sign.abs() == 1).then_some(word)
}

/// How two Integers order (-1, 0 or 1) when at least one is a Bignum, as
/// Ruby's own Integer comparisons order them (`rb_big_cmp`, which reads
/// both without allocating or running Ruby code); None when either is not
/// an Integer, both are Fixnums, or they are equal in value but not of one
/// type (an unnormalised Bignum: `eql?` tells them apart).
#[inline(always)]
pub fn integer_order(a: VALUE, b: VALUE) -> Option<i64> {
    let (a_big, b_big) = (
        has_type(a, ruby_value_type::RUBY_T_BIGNUM),
        has_type(b, ruby_value_type::RUBY_T_BIGNUM),
    );
    if !(a_big && (b_big || is_fixnum(b)) || b_big && is_fixnum(a)) {
        return None;
    }
    // SAFETY: the first operand is a Bignum and the second an Integer.
    let order = unsafe {
        if a_big {
            fixnum_value(rb_sys::rb_big_cmp(a, b))?
        } else {
            -fixnum_value(rb_sys::rb_big_cmp(b, a))?
        }
    };
    (order != 0 || a_big == b_big).then_some(order.signum())
}

/// The value of a Float, or None for anything else.
#[inline(always)]
pub fn float_value(value: VALUE) -> Option<f64> {
    // SAFETY: the type check comes first; rb_float_value reads a Float.
    unsafe { rb_sys::RB_FLOAT_TYPE_P(value).then(|| rb_sys::rb_float_value(value)) }
}

/// Whether `value` is truthy (neither nil nor false).
#[inline(always)]
pub fn truthy(value: VALUE) -> bool {
    rb_sys::TEST(value)
}

/// `true` or `false`.
#[inline(always)]
pub fn boolean(value: bool) -> VALUE {
    if value {
        QTRUE
    } else {
        QFALSE
    }
}

/// -1, 0 or 1 as a Fixnum, as `<=>` returns.
#[inline(always)]
pub fn ordering(order: std::cmp::Ordering) -> VALUE {
    ((order as i64) << 1 | 1) as VALUE
}

/// The length of an Array, or None for anything else.
#[inline(always)]
pub fn array_len(value: VALUE) -> Option<usize> {
    // SAFETY: type checked before the length is read.
    has_type(value, ruby_value_type::RUBY_T_ARRAY)
        .then(|| unsafe { rb_sys::RARRAY_LEN(value) } as usize)
}

/// The element at `index` of the Array `array` (nil past its end).
///
/// # Safety
/// `array` is an Array.
#[inline(always)]
pub unsafe fn array_entry(array: VALUE, index: usize) -> VALUE {
    // SAFETY: by the caller's contract; rb_ary_entry reads the element (nil
    // out of range), allocates nothing and never raises.
    unsafe { rb_sys::rb_ary_entry(array, index as std::ffi::c_long) }
}

/// The class of `value` (its real class, singleton classes skipped).
#[inline(always)]
pub fn class_of(value: VALUE) -> VALUE {
    // SAFETY: reads the class pointer of a live object (or the class of
    // a special constant).
    unsafe { rb_sys::rb_obj_class(value) }
}

/// Whether `value` is an instance of `class` or of a subclass.
#[inline(always)]
pub fn is_kind_of(value: VALUE, class: VALUE) -> bool {
    // SAFETY: walks the ancestry of a live object; never calls Ruby code.
    unsafe { rb_sys::rb_obj_is_kind_of(value, class) == QTRUE }
}

/// Whether `value` is a special constant (nil, true, false, a Fixnum, a
/// static Symbol, a flonum), not a heap object.
#[inline(always)]
pub fn is_special_const(value: VALUE) -> bool {
    rb_sys::SPECIAL_CONST_P(value)
}

/// Whether `value` is a static Symbol (one that is never collected).
#[inline(always)]
pub fn is_static_symbol(value: VALUE) -> bool {
    rb_sys::STATIC_SYM_P(value)
}

/// Whether `value` is frozen (a special constant always is).
#[inline(always)]
pub fn is_frozen(value: VALUE) -> bool {
    // SAFETY: rb_obj_frozen_p reads the object's flags; it runs no Ruby
    // code and allocates nothing.
    unsafe { rb_sys::rb_obj_frozen_p(value) == QTRUE }
}

/// The String class.
#[inline(always)]
pub fn string_class() -> VALUE {
    // SAFETY: a core class global, set at interpreter start.
    unsafe { rb_sys::rb_cString }
}

/// The value of the key `key` in the Hash `hash`, if it has that key;
/// `key`'s hash and equality must be computed by Ruby in C (an Integer, a
/// Symbol or a plain String).
#[inline(always)]
pub fn hash_lookup(hash: VALUE, key: VALUE) -> Option<VALUE> {
    // SAFETY: for such keys the lookup runs no Ruby code and allocates
    // nothing.
    let value = unsafe { rb_sys::rb_hash_lookup2(hash, key, QUNDEF) };
    (value != QUNDEF).then_some(value)
}

/// A Fixnum, or None when `value` is out of the Fixnum range.
#[inline(always)]
pub fn fixnum(value: i64) -> Option<VALUE> {
    let value = value as std::ffi::c_long;
    // SAFETY: LONG2FIX only once FIXABLE says the value fits.
    rb_sys::FIXABLE(value).then(|| unsafe { rb_sys::LONG2FIX(value) })
}

/// Calls `each` with the keys of the Hash `hash`, in order, while it
/// returns true. No allocation; `each` must not modify the Hash or run
/// Ruby code.
pub fn hash_each_key<F: FnMut(VALUE) -> bool>(hash: VALUE, mut each: F) {
    unsafe extern "C" fn trampoline<F: FnMut(VALUE) -> bool>(
        key: VALUE,
        _value: VALUE,
        arg: VALUE,
    ) -> c_int {
        // SAFETY: `arg` is the address of `each` below, alive during the
        // iteration.
        let each = unsafe { &mut *(arg as *mut F) };
        // ST_CONTINUE = 0, ST_STOP = 1
        c_int::from(!each(key))
    }
    // SAFETY: `hash` is a Hash; the callback runs no Ruby code and does not
    // modify it (the caller's contract).
    unsafe {
        rb_sys::rb_hash_foreach(hash, Some(trampoline::<F>), &mut each as *mut F as VALUE);
    }
}

/// The source String and options of a Regexp, or None for anything else.
#[inline(always)]
pub fn regexp_source(value: VALUE) -> Option<(VALUE, u32)> {
    if !has_type(value, ruby_value_type::RUBY_T_REGEXP) {
        return None;
    }
    // SAFETY: a Regexp (checked above): its RRegexp header holds the frozen
    // source String; rb_reg_options reads its flags.
    unsafe {
        let src = (*(value as *const rb_sys::RRegexp)).src;
        Some((src, rb_sys::rb_reg_options(value) as u32))
    }
}

/// `String#==` between two Strings: bytes and encodings compared in C.
///
/// # Safety
/// Both are Strings.
#[inline(always)]
pub unsafe fn strings_equal(a: VALUE, b: VALUE) -> bool {
    // SAFETY: by the caller's contract, rb_str_equal compares two Strings exactly as
    // String#== does for a String argument; no Ruby code runs.
    unsafe { rb_sys::rb_str_equal(a, b) == QTRUE }
}

/// `String#<=>` between two Strings.
///
/// # Safety
/// Both are Strings.
#[inline(always)]
pub unsafe fn strings_order(a: VALUE, b: VALUE) -> std::cmp::Ordering {
    // SAFETY: by the caller's contract, rb_str_cmp compares two Strings exactly as
    // String#<=> does for a String argument; no Ruby code runs.
    unsafe { rb_sys::rb_str_cmp(a, b).cmp(&0) }
}

/// NameError.
pub fn name_error_class() -> VALUE {
    // SAFETY: a core class global, set at interpreter start.
    unsafe { rb_sys::rb_eNameError }
}

/// The instance variable `id` of `object` (nil when unset), as
/// `attr_reader` would return it, without calling Ruby code.
pub fn attribute(object: VALUE, id: rb_sys::ID) -> VALUE {
    // SAFETY: reads an instance variable slot; allocates nothing and never
    // raises.
    unsafe { rb_sys::rb_attr_get(object, id) }
}

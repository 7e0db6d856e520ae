//! `Ruzzy::FuzzedDataProvider` (Ruzzy 0.8's rules) and its subclass
//! `Ruzzy::LLVMFuzzedDataProvider` (LLVM's): typed values from one input.
//!
//! A thin Ruby binding over [`crate::input::data_provider`], which holds the rules.
//! Argument errors raise `Ruzzy::InvalidArgumentsError` (an `ArgumentError`,
//! as in 0.8); wrong argument types raise `TypeError`.
//! `lib/ruzzy/fuzzed_data_provider.rb` adds the methods whose arguments are
//! Ruby collections (choices, lists).
//!
//! Invariants: the provider owns a copy of the input; methods never panic;
//! every Ruby allocation runs under `rb_protect` with no Rust value that
//! needs dropping alive, and after the cursors have moved, so that a
//! `NoMemoryError` leaves the provider consistent.

use crate::error::{tagged, value_of, Tag};
use crate::input::data_provider::{ArgError, DataProvider, RangeWidth, Rules, SignedTail};
use crate::rb;
use magnus::{
    method, prelude::*, typed_data::Obj, Error, Integer, RClass, RModule, RString, Ruby, Value,
};

#[magnus::wrap(class = "Ruzzy::FuzzedDataProvider", free_immediately, size)]
pub struct FuzzedDataProvider(DataProvider);

fn argument_error(ruby: &Ruby, message: ArgError) -> Error {
    tagged(ruby, Tag::InvalidArguments, message)
}

/// The Integer with big-endian `bytes` (see [`rb::integer_from_be_bytes`]).
fn integer(bytes: &[u8], signed: bool) -> Result<Value, Error> {
    value_of(rb::integer_from_be_bytes(bytes, signed))
}

/// A byte count: Integers beyond 64 bits saturate (a huge count takes
/// everything, a hugely negative one nothing), as plain Ruby arithmetic would.
fn count(value: Integer) -> Result<i64, Error> {
    match value.to_i64() {
        Ok(n) => Ok(n),
        Err(_) if value.funcall::<_, _, bool>("negative?", ())? => Ok(i64::MIN),
        Err(_) => Ok(i64::MAX),
    }
}

impl FuzzedDataProvider {
    fn wrap(ruby: &Ruby, class: RClass, data: RString, rules: Rules) -> Obj<FuzzedDataProvider> {
        // SAFETY: the bytes are copied at once, before any Ruby code runs.
        let bytes = unsafe { data.as_slice() }.to_vec();
        ruby.obj_wrap_as(FuzzedDataProvider(DataProvider::new(bytes, rules)), class)
    }

    fn new_ruzzy(ruby: &Ruby, class: RClass, data: RString) -> Obj<FuzzedDataProvider> {
        Self::wrap(ruby, class, data, Rules::Ruzzy)
    }

    fn new_llvm(ruby: &Ruby, class: RClass, data: RString) -> Obj<FuzzedDataProvider> {
        Self::wrap(ruby, class, data, Rules::Llvm)
    }

    fn remaining_bytes(&self) -> usize {
        self.0.remaining_bytes()
    }

    fn consume_bytes(&self, n: Integer) -> Result<Value, Error> {
        let range = self.0.consume_bytes(count(n)?);
        value_of(rb::binary_string(self.0.bytes(range)))
    }

    fn consume_remaining_bytes(&self) -> Result<Value, Error> {
        let range = self.0.consume_bytes(self.0.remaining_bytes() as i64);
        value_of(rb::binary_string(self.0.bytes(range)))
    }

    /// UTF-8 when every byte is ASCII, binary otherwise (as 0.8's String
    /// building gave).
    fn consume_random_length_string(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[Value],
    ) -> Result<Value, Error> {
        let max_length = match args {
            [] => rb_self.0.remaining_bytes() as i64,
            [max] => count(Integer::try_convert(*max)?)?,
            _ => {
                return Err(Error::new(
                    ruby.exception_arg_error(),
                    format!(
                        "wrong number of arguments (given {}, expected 0..1)",
                        args.len()
                    ),
                ))
            }
        };
        let plan = rb_self.0.plan_random_length_string(max_length);
        value_of(rb::string_with(plan.len, plan.ascii, |out| {
            rb_self.0.take_random_length_string(&plan, out)
        }))
    }

    fn consume_uint(ruby: &Ruby, rb_self: &Self, bytes: Integer) -> Result<Value, Error> {
        match rb_self
            .0
            .consume_uint(count(bytes)?)
            .map_err(|e| argument_error(ruby, e))?
        {
            Ok(value) => integer(&value.to_be_bytes(), false),
            Err(tail) => value_of(rb::integer_from_be_bytes(
                rb_self.0.bytes(tail.range),
                false,
            )),
        }
    }

    fn consume_int(ruby: &Ruby, rb_self: &Self, bytes: Integer) -> Result<Value, Error> {
        match rb_self
            .0
            .consume_int(count(bytes)?)
            .map_err(|e| argument_error(ruby, e))?
        {
            SignedTail::Small(value) => integer(&value.to_be_bytes(), true),
            SignedTail::Wide { range, negative } => {
                value_of(rb::integer_from_be_bytes(rb_self.0.bytes(range), negative))
            }
        }
    }

    /// Any Integers: 128-bit arithmetic when both fit, Ruby's otherwise.
    fn consume_int_in_range(
        ruby: &Ruby,
        rb_self: &Self,
        min: Integer,
        max: Integer,
    ) -> Result<Value, Error> {
        if let (Ok(lo), Ok(hi)) = (min.to_i128(), max.to_i128()) {
            if lo > hi {
                return Err(argument_error(
                    ruby,
                    format!("min ({lo}) must be <= max ({hi})"),
                ));
            }
            let width = hi.abs_diff(lo);
            let offset = rb_self.0.consume_in_range(match u64::try_from(width) {
                Ok(narrow) => RangeWidth::Narrow(narrow),
                Err(_) => RangeWidth::Wide,
            });
            // lo + offset <= hi, which fits.
            return integer(&(lo + i128::from(offset)).to_be_bytes(), true);
        }
        let width: Integer = max.funcall("-", (min,))?;
        if width.funcall::<_, _, bool>("negative?", ())? {
            return Err(argument_error(
                ruby,
                format!("min ({}) must be <= max ({})", min.inspect(), max.inspect()),
            ));
        }
        let offset = rb_self.0.consume_in_range(match width.to_u64() {
            Ok(narrow) => RangeWidth::Narrow(narrow),
            Err(_) => RangeWidth::Wide,
        });
        min.funcall::<_, _, Value>("+", (offset,))
    }

    fn consume_bool(&self) -> bool {
        self.0.consume_bool()
    }

    fn consume_probability(&self) -> Result<Value, Error> {
        value_of(rb::float(self.0.consume_probability()))
    }

    fn consume_float(&self) -> Result<Value, Error> {
        value_of(rb::float(self.0.consume_float()))
    }

    /// `min` itself (an Integer stays one) when the bounds are equal.
    fn consume_float_in_range(
        ruby: &Ruby,
        rb_self: &Self,
        min: Value,
        max: Value,
    ) -> Result<Value, Error> {
        let (lo, hi) = (f64::try_convert(min)?, f64::try_convert(max)?);
        let value = rb_self
            .0
            .consume_float_in_range(lo, hi)
            .map_err(|e| argument_error(ruby, e))?;
        if lo == hi {
            return Ok(min);
        }
        value_of(rb::float(value))
    }

    fn consume_unicode_native(&self, n: Integer, surrogates: bool) -> Result<Value, Error> {
        let chars = self.0.consume_unicode(count(n)?, surrogates);
        value_of(rb::string_with(chars.len(), true, |out| {
            out.copy_from_slice(&chars)
        }))
    }
}

/// Defines `Ruzzy::FuzzedDataProvider` and `Ruzzy::LLVMFuzzedDataProvider`.
pub fn define(ruby: &Ruby, ruzzy: RModule) -> Result<(), Error> {
    let class: RClass = ruzzy.define_class("FuzzedDataProvider", ruby.class_object())?;
    // Instances are made by `new` only; without this, Ruby 3.3 and later
    // warn "undefining the allocator of T_DATA class" on the first one.
    class.undef_default_alloc_func();
    class.define_singleton_method("new", method!(FuzzedDataProvider::new_ruzzy, 1))?;
    // Each `NAME => method, arity` becomes a public method of the class.
    macro_rules! methods {
        ($($name:literal => $function:ident, $arity:tt;)*) => {
            $( class.define_method($name, method!(FuzzedDataProvider::$function, $arity))?; )*
        };
    }
    methods! {
        "remaining_bytes" => remaining_bytes, 0;
        "consume_bytes" => consume_bytes, 1;
        "consume_remaining_bytes" => consume_remaining_bytes, 0;
        "consume_remaining_as_string" => consume_remaining_bytes, 0;
        "consume_uint" => consume_uint, 1;
        "consume_int" => consume_int, 1;
        "consume_int_in_range" => consume_int_in_range, 2;
        "consume_bool" => consume_bool, 0;
        "consume_probability" => consume_probability, 0;
        "consume_float" => consume_float, 0;
        "consume_float_in_range" => consume_float_in_range, 2;
    }
    class.define_method(
        "consume_random_length_string",
        method!(FuzzedDataProvider::consume_random_length_string, -1),
    )?;
    class.define_private_method(
        "_consume_unicode",
        method!(FuzzedDataProvider::consume_unicode_native, 2),
    )?;
    let llvm: RClass = ruzzy.define_class("LLVMFuzzedDataProvider", class)?;
    llvm.define_singleton_method("new", method!(FuzzedDataProvider::new_llvm, 1))?;
    Ok(())
}

//! `Ruzzy::FuzzedDataProvider`: typed values carved from one input.
//!
//! A thin Ruby binding over [`crate::data_provider`], which holds the rules
//! (LLVM's `FuzzedDataProvider.h`). Argument errors raise
//! `Ruzzy::InvalidArgumentsError` (an `ArgumentError`); wrong argument types
//! raise `TypeError`. `lib/ruzzy/fuzzed_data_provider.rb` adds the methods
//! whose arguments are Ruby collections (choices, lists).
//!
//! Invariants: the provider owns a copy of the input; methods never panic.

use crate::data_provider::{ArgError, DataProvider};
use magnus::{
    function, method, prelude::*, Error, ExceptionClass, Integer, RClass, RModule, RString, Ruby,
};
use std::cell::RefCell;

#[magnus::wrap(class = "Ruzzy::FuzzedDataProvider", free_immediately, size)]
pub struct FuzzedDataProvider(RefCell<DataProvider>);

fn argument_error(ruby: &Ruby, message: ArgError) -> Error {
    let class = ruby
        .class_object()
        .const_get::<_, RModule>("Ruzzy")
        .and_then(|ruzzy| ruzzy.const_get::<_, ExceptionClass>("InvalidArgumentsError"))
        .unwrap_or_else(|_| ruby.exception_arg_error());
    Error::new(class, message)
}

fn count(value: Integer) -> Result<i64, Error> {
    value.to_i64()
}

impl FuzzedDataProvider {
    fn new(data: RString) -> FuzzedDataProvider {
        // SAFETY: the bytes are copied at once, before any Ruby code runs.
        let bytes = unsafe { data.as_slice() }.to_vec();
        FuzzedDataProvider(RefCell::new(DataProvider::new(bytes)))
    }

    fn remaining_bytes(&self) -> usize {
        self.0.borrow().remaining_bytes()
    }

    fn consume_bytes(ruby: &Ruby, rb_self: &Self, n: Integer) -> Result<RString, Error> {
        let mut provider = rb_self.0.borrow_mut();
        let bytes = provider
            .consume_bytes(count(n)?)
            .map_err(|e| argument_error(ruby, e))?;
        Ok(ruby.str_from_slice(bytes))
    }

    fn consume_remaining_bytes(ruby: &Ruby, rb_self: &Self) -> Result<RString, Error> {
        let mut provider = rb_self.0.borrow_mut();
        let remaining = provider.remaining_bytes() as i64;
        let bytes = provider
            .consume_bytes(remaining)
            .map_err(|e| argument_error(ruby, e))?;
        Ok(ruby.str_from_slice(bytes))
    }

    fn consume_random_length_string(
        ruby: &Ruby,
        rb_self: &Self,
        args: &[magnus::Value],
    ) -> Result<RString, Error> {
        let mut provider = rb_self.0.borrow_mut();
        let max_length = match args {
            [] => provider.remaining_bytes() as i64,
            [max] => count(Integer::try_convert(*max)?)?,
            _ => {
                return Err(Error::new(
                    ruby.exception_arg_error(),
                    "wrong number of arguments (expected 0..1)",
                ))
            }
        };
        let bytes = provider
            .consume_random_length_string(max_length)
            .map_err(|e| argument_error(ruby, e))?;
        Ok(ruby.str_from_slice(&bytes))
    }

    fn consume_uint(ruby: &Ruby, rb_self: &Self, bytes: Integer) -> Result<u64, Error> {
        let n = count(bytes)?;
        rb_self
            .0
            .borrow_mut()
            .consume_uint(n)
            .map_err(|e| argument_error(ruby, e))
    }

    fn consume_int(ruby: &Ruby, rb_self: &Self, bytes: Integer) -> Result<i64, Error> {
        let n = count(bytes)?;
        rb_self
            .0
            .borrow_mut()
            .consume_int(n)
            .map_err(|e| argument_error(ruby, e))
    }

    fn consume_int_in_range(
        ruby: &Ruby,
        rb_self: &Self,
        min: Integer,
        max: Integer,
    ) -> Result<Integer, Error> {
        let (min, max) = (min.to_i128()?, max.to_i128()?);
        let value = rb_self
            .0
            .borrow_mut()
            .consume_integral_in_range(min, max)
            .map_err(|e| argument_error(ruby, e))?;
        Ok(ruby.integer_from_i128(value))
    }

    fn consume_bool(&self) -> bool {
        self.0.borrow_mut().consume_bool()
    }

    fn consume_probability(&self) -> f64 {
        self.0.borrow_mut().consume_probability()
    }

    fn consume_float(&self) -> f64 {
        self.0.borrow_mut().consume_float()
    }

    fn consume_float_in_range(
        ruby: &Ruby,
        rb_self: &Self,
        min: f64,
        max: f64,
    ) -> Result<f64, Error> {
        rb_self
            .0
            .borrow_mut()
            .consume_float_in_range(min, max)
            .map_err(|e| argument_error(ruby, e))
    }

    fn consume_unicode_native(
        ruby: &Ruby,
        rb_self: &Self,
        n: Integer,
        surrogates: bool,
    ) -> Result<RString, Error> {
        let bytes = rb_self
            .0
            .borrow_mut()
            .consume_unicode(count(n)?, surrogates)
            .map_err(|e| argument_error(ruby, e))?;
        Ok(ruby.enc_str_new(&bytes, ruby.utf8_encoding()))
    }
}

/// Defines `Ruzzy::FuzzedDataProvider`.
pub fn define(ruby: &Ruby, ruzzy: RModule) -> Result<(), Error> {
    let class: RClass = ruzzy.define_class("FuzzedDataProvider", ruby.class_object())?;
    class.define_singleton_method("new", function!(FuzzedDataProvider::new, 1))?;
    class.define_method(
        "remaining_bytes",
        method!(FuzzedDataProvider::remaining_bytes, 0),
    )?;
    class.define_method(
        "consume_bytes",
        method!(FuzzedDataProvider::consume_bytes, 1),
    )?;
    class.define_method(
        "consume_remaining_bytes",
        method!(FuzzedDataProvider::consume_remaining_bytes, 0),
    )?;
    class.define_method(
        "consume_remaining_as_string",
        method!(FuzzedDataProvider::consume_remaining_bytes, 0),
    )?;
    class.define_method(
        "consume_random_length_string",
        method!(FuzzedDataProvider::consume_random_length_string, -1),
    )?;
    class.define_method("consume_uint", method!(FuzzedDataProvider::consume_uint, 1))?;
    class.define_method("consume_int", method!(FuzzedDataProvider::consume_int, 1))?;
    class.define_method(
        "consume_int_in_range",
        method!(FuzzedDataProvider::consume_int_in_range, 2),
    )?;
    class.define_method("consume_bool", method!(FuzzedDataProvider::consume_bool, 0))?;
    class.define_method(
        "consume_probability",
        method!(FuzzedDataProvider::consume_probability, 0),
    )?;
    class.define_method(
        "consume_float",
        method!(FuzzedDataProvider::consume_float, 0),
    )?;
    class.define_method(
        "consume_float_in_range",
        method!(FuzzedDataProvider::consume_float_in_range, 2),
    )?;
    class.define_private_method(
        "_consume_unicode",
        method!(FuzzedDataProvider::consume_unicode_native, 2),
    )?;
    Ok(())
}

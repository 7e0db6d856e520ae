//! Exceptions raised by native code.
//!
//! Also: raising again, through magnus, an exception that `rb::protect`
//! caught ([`value_of`]).
//!
//! Each one is built by its Ruby tag, `Ruzzy::<Tag>.exception(message)`
//! (`lib/ruzzy/error.rb`), so one place decides which standard class is
//! raised and how it is tagged. Should the tag be missing (the Ruby side was
//! not loaded), the standard class is raised untagged rather than failing.
//!
//! May use: nothing.

use magnus::{prelude::*, rb_sys::FromRawValue, Error, Exception, RModule, Ruby, Value};

/// `Ruzzy::<tag>.exception(message)`: the tag's own standard class.
pub fn tagged(ruby: &Ruby, tag: &str, message: String) -> Error {
    let built = ruby
        .class_object()
        .const_get::<_, RModule>("Ruzzy")
        .and_then(|ruzzy| ruzzy.const_get::<_, RModule>(tag))
        .and_then(|tag| tag.funcall::<_, _, Exception>("exception", (message.as_str(),)));
    match built {
        Ok(exception) => Error::from(exception),
        Err(_) => Error::new(ruby.exception_runtime_error(), message),
    }
}

/// The value `rb::protect` returned, or the exception it caught as a magnus
/// `Error` (raised when the method returns).
pub fn value_of(result: Result<rb_sys::VALUE, rb_sys::VALUE>) -> Result<Value, Error> {
    match result {
        // SAFETY: a live object just returned by the Ruby C API.
        Ok(raw) => Ok(unsafe { Value::from_raw(raw) }),
        Err(raw) => {
            // SAFETY: the live exception object rb_protect caught.
            let value = unsafe { Value::from_raw(raw) };
            Err(match Exception::from_value(value) {
                Some(exception) => Error::from(exception),
                None => Error::new(
                    Ruby::get_with(value).exception_runtime_error(),
                    "non-local exit",
                ),
            })
        }
    }
}

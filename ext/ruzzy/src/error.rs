//! Exceptions raised by native code.
//!
//! Also: raising again, through magnus, an exception that `rb::protect`
//! caught ([`value_of`]).
//!
//! Each one is built by its Ruby tag, `Ruzzy::<Tag>.exception(message)`
//! (`lib/ruzzy/error.rb`), so one place decides which standard class is
//! raised and how it is tagged. The tags native code raises are the [`Tag`]
//! enum, named once: [`resolve`] looks each one up when the extension loads,
//! and a missing one makes `require "ruzzy"` fail saying which, rather than
//! a misspelt name raising a plain RuntimeError when the error happens.
//!
//! May use: nothing.

use magnus::{
    prelude::*, rb_sys::FromRawValue, value::Opaque, Error, Exception, RModule, Ruby, Value,
};
use std::sync::OnceLock;

/// A tag of `lib/ruzzy/error.rb` that native code raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    InvalidArguments,
    AlreadyFuzzing,
    EngineUnavailable,
}

impl Tag {
    /// Every tag, in the order of [`TAGS`].
    const ALL: [Tag; 3] = [
        Tag::InvalidArguments,
        Tag::AlreadyFuzzing,
        Tag::EngineUnavailable,
    ];

    /// Its module's name under `Ruzzy`.
    pub const fn name(self) -> &'static str {
        match self {
            Tag::InvalidArguments => "InvalidArgumentsError",
            Tag::AlreadyFuzzing => "AlreadyFuzzingError",
            Tag::EngineUnavailable => "EngineUnavailableError",
        }
    }
}

/// The tags' modules, in the order of [`Tag::ALL`] (marked for the GC, so
/// they never move nor go away).
static TAGS: OnceLock<[Opaque<RModule>; Tag::ALL.len()]> = OnceLock::new();

/// Looks every [`Tag`] up under `Ruzzy` (called once, at `require`); a
/// LoadError naming the first one that is missing.
pub fn resolve(ruby: &Ruby, ruzzy: RModule) -> Result<(), Error> {
    let mut modules = Vec::with_capacity(Tag::ALL.len());
    for tag in Tag::ALL {
        let Ok(module) = ruzzy.const_get::<_, RModule>(tag.name()) else {
            return Err(Error::new(
                ruby.exception_load_error(),
                format!(
                    "ruzzy's native extension raises Ruzzy::{}, which its Ruby files do not \
                     define (lib/ruzzy/error.rb): they do not match; reinstall ruzzy",
                    tag.name()
                ),
            ));
        };
        ruby.gc_register_mark_object(module);
        modules.push(Opaque::from(module));
    }
    if let Ok(modules) = modules.try_into() {
        let _ = TAGS.set(modules);
    }
    Ok(())
}

/// The names of the tags native code raises (`Ruzzy::Native::ERROR_TAGS`).
pub fn tag_names(ruby: &Ruby) -> Value {
    let names = ruby.ary_from_iter(Tag::ALL.iter().map(|tag| tag.name()));
    names.freeze();
    names.as_value()
}

/// `Ruzzy::<tag>.exception(message)`: the tag's own standard class. Should
/// building it fail (the Ruby side broke `exception`), that failure is
/// raised instead.
pub fn tagged(ruby: &Ruby, tag: Tag, message: String) -> Error {
    let Some(tags) = TAGS.get() else {
        unreachable!("the error tags are resolved when the extension loads");
    };
    let module = ruby.get_inner(tags[tag as usize]);
    match module.funcall::<_, _, Exception>("exception", (message.as_str(),)) {
        Ok(exception) => Error::from(exception),
        Err(error) => error,
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

//! Defining C methods on Ruby modules from Rust function pointers, with
//! the arity carried by the pointer's type.
//!
//! Invariants: used at `require` time only, with the GVL held; a
//! definition that raises (a frozen module) comes back as an `Err`.

use magnus::{rb_sys::AsRawValue, Error, RModule};
use rb_sys::VALUE;
use std::ffi::{c_int, CStr};

/// A C method of arity 1: (self, argument).
pub type OneArg = unsafe extern "C" fn(VALUE, VALUE) -> VALUE;
/// A C method of arity 2: (self, argument, argument).
pub type TwoArgs = unsafe extern "C" fn(VALUE, VALUE, VALUE) -> VALUE;
/// A C method of arity -1: (argc, argv, self).
pub type VarArgs = unsafe extern "C" fn(c_int, *const VALUE, VALUE) -> VALUE;

/// A C method's function, tagged with its arity.
#[derive(Clone, Copy)]
pub enum Function {
    One(OneArg),
    Two(TwoArgs),
    Var(VarArgs),
}

/// Whether a method is public or private (Kernel's conversion functions,
/// `Kernel#eval`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Visibility {
    Public,
    Private,
}

/// Defines `function` as the method `name` of `module`.
pub fn define(
    module: RModule,
    name: &CStr,
    function: Function,
    visibility: Visibility,
) -> Result<(), Error> {
    type Erased = unsafe extern "C" fn() -> VALUE;
    // SAFETY: each transmute only erases the argument list of an extern "C"
    // function pointer; Ruby casts it back by the arity passed beside it.
    let (pointer, arity) = unsafe {
        match function {
            Function::One(f) => (std::mem::transmute::<OneArg, Erased>(f), 1),
            Function::Two(f) => (std::mem::transmute::<TwoArgs, Erased>(f), 2),
            Function::Var(f) => (std::mem::transmute::<VarArgs, Erased>(f), -1),
        }
    };
    let definer = match visibility {
        Visibility::Public => rb_sys::rb_define_method,
        Visibility::Private => rb_sys::rb_define_private_method,
    };
    let defined = super::protect(|_| {
        // SAFETY: a live module, a NUL-terminated name and a function
        // matching `arity`; a raise is caught by protect.
        unsafe { definer(module.as_raw(), name.as_ptr(), Some(pointer), arity) };
        super::QNIL
    });
    crate::error::value_of(defined).map(|_| ())
}

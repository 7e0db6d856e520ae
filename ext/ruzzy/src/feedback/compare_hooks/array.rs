//! Array hooks: a membership test or search (`include?`, `index`,
//! `find_index`) whose value (an Integer, Symbol or plain String) is not
//! found reports the value against (some of) the elements of its kind, so
//! that `ALLOWED.include?(input)` and `list.include?(31_337)` lead libFuzzer
//! to the values the Array holds.
//!
//! Each hook runs the search first (`super`) and reports only after a miss,
//! so results (and the `==` calls Ruby makes) are unchanged. Fast path:
//! while `include?` is Ruby's own, the hook calls its C function
//! (`rb_ary_includes`, public API) instead of `super`.

use super::{builtin, FastPath, Hook, HookModule};
use crate::feedback::compare_sites;
use crate::rb::method::Function;
use crate::rb::value::{self, integer_bits, Frame, MethodCall};
use rb_sys::{Qfalse, Qnil, VALUE};
use std::ffi::c_int;

pub const HOOKS: HookModule = HookModule {
    group: "array",
    class: c"Array",
    module: "ArrayHooks",
    hooks: &[
        Hook::new(&[c"include?"], Function::One(include_p)).fast(FastPath::ArrayInclude),
        Hook::new(&[c"index", c"find_index"], Function::Var(index)),
    ],
};

/// How many elements a miss is compared against.
const ELEMENTS_REPORTED: usize = 64;

/// `Array#include?(value)`.
unsafe extern "C" fn include_p(this: VALUE, value: VALUE) -> VALUE {
    let args = [value];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    let found = if builtin(FastPath::ArrayInclude) {
        // SAFETY: `this` is an Array (the hook is prepended to Array only)
        // and Array#include? is this function; an exception it raises
        // (from an element's `==`) unwinds through this frame, which owns
        // nothing.
        unsafe { rb_sys::rb_ary_includes(this, value) }
    } else {
        call.call_super()
    };
    if found == Qfalse as VALUE {
        report_miss(&call, this, value);
    }
    found
}

/// `Array#index(value)` and `find_index(value)` (with a block, or no
/// argument, nothing is reported).
unsafe extern "C" fn index(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let found = call.call_super();
    if let &[value] = call.args() {
        if found == Qnil as VALUE {
            report_miss(&call, this, value);
        }
    }
    found
}

/// Reports `value`, missing from `array` (an Array: the hooks are only
/// prepended to Array), against the elements of the same kind.
fn report_miss(frame: &Frame, array: VALUE, value: VALUE) {
    let simple = value::is_fixnum(value)
        || value::is_static_symbol(value)
        || !value::is_special_const(value) && value::class_of(value) == value::string_class();
    if !simple {
        return;
    }
    let Some(site) = compare_sites::caller(frame) else {
        return;
    };
    compare_sites::reach(site);
    let mut position = 0;
    // The length is read again each time: `==` ran Ruby code in `super`,
    // but nothing runs here.
    while position < ELEMENTS_REPORTED && position < value::array_len(array).unwrap_or(0) {
        // SAFETY: `position` is inside the Array, read just above.
        let element = unsafe { value::array_entry(array, position) };
        if let (Some(a), Some(b)) = (integer_bits(value), integer_bits(element)) {
            compare_sites::cmp8(site, a, b);
        } else if let (Some(a), Some(b)) = (frame.text_bytes(value), frame.text_bytes(element)) {
            compare_sites::bytes(site, a, b);
        }
        position += 1;
    }
}

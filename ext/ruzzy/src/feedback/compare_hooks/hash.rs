//! Hash hooks: a lookup whose key (an Integer, Symbol or plain String) is
//! missing reports the key against (some of) the keys the Hash has; one
//! that finds it counts its site's "found" counter (coverage). A missing
//! String or Symbol key is also a wanted value ([`wanted`]), wherever the
//! lookup runs.
//!
//! Fast paths: while `Hash#[]`, `fetch` and the `key?` family are Ruby's
//! own, their hooks answer from the lookup they made to report (or, for
//! `[]` with any other key, through `rb_hash_aref`, which is `Hash#[]`)
//! instead of calling `super`.

use super::{builtin, FastPath, Hook, HookModule};
use crate::coverage::{hook, path_registry};
use crate::feedback::{compare_sites, wanted};
use crate::rb::method::Function;
use crate::rb::value::{self, boolean, integer_bits, Frame, MethodCall};
use rb_sys::VALUE;
use std::ffi::c_int;

pub const HOOKS: HookModule = HookModule {
    group: "hash",
    class: c"Hash",
    module: "HashHooks",
    hooks: &[
        Hook::new(&[c"[]"], Function::One(aref)).fast(FastPath::HashAref),
        Hook::new(&[c"fetch"], Function::Var(fetch)).fast(FastPath::HashFetch),
        has_key::<{ FastPath::HashKey as usize }>(&[c"key?"]),
        has_key::<{ FastPath::HashHasKey as usize }>(&[c"has_key?"]),
        has_key::<{ FastPath::HashInclude as usize }>(&[c"include?"]),
        has_key::<{ FastPath::HashMember as usize }>(&[c"member?"]),
        Hook::new(&[c"dig"], Function::Var(lookup)),
    ],
};

/// How many keys a missed lookup is compared against.
const KEYS_REPORTED: usize = 64;

/// What a hook learnt about its key.
enum Lookup {
    /// The key is there, with this value.
    Found(VALUE),
    /// The key is not there (reported).
    Missing,
    /// The key is not of a kind looked up without running Ruby code.
    Unknown,
}

/// What tells a found key apart in its site's counters: a key the code
/// names (a static Symbol, a frozen String: a literal, a Symbol's name as
/// `HashWithIndifferentAccess` converts it) is itself; any other (a String
/// built from the input, an Integer) is 0, so an input cannot make a new
/// counter out of every key it invents.
fn named_key(frame: &Frame, key: VALUE) -> u64 {
    if value::is_static_symbol(key) {
        return key;
    }
    match frame.string_bytes(key) {
        Some(bytes) if value::is_frozen(key) => path_registry::hash_bytes(bytes) | 1,
        _ => 0,
    }
}

/// `Hash#[]`.
unsafe extern "C" fn aref(this: VALUE, key: VALUE) -> VALUE {
    let args = [key];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    let fast = builtin(FastPath::HashAref);
    let found = look_up(&call, this, key, fast);
    if !fast {
        return call.call_super();
    }
    match found {
        Lookup::Found(value) => value,
        // SAFETY: `this` is the Hash whose `Hash#[]` this is, and that
        // method is `rb_hash_aref` while it is Ruby's own (checked above).
        Lookup::Missing | Lookup::Unknown => unsafe { call.hash_aref(this, key) },
    }
}

/// `Hash#fetch(key)`: a key that is there needs neither the default nor
/// the block.
unsafe extern "C" fn fetch(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    if let &[key] = call.args() {
        let fast = builtin(FastPath::HashFetch);
        if let Lookup::Found(value) = look_up(&call, this, key, fast) {
            if fast {
                return value;
            }
        }
    } else if let Some(&key) = call.args().first() {
        look_up(&call, this, key, false);
    }
    call.call_super()
}

/// The hook of `key?`, `has_key?`, `include?` or `member?` (`name`), whose
/// fast path is the [`FastPath`] numbered `FAST`.
const fn has_key<const FAST: usize>(name: &'static [&'static std::ffi::CStr]) -> Hook {
    Hook::new(name, Function::One(key_p::<FAST>)).fast(FastPath::ALL[FAST])
}

unsafe extern "C" fn key_p<const FAST: usize>(this: VALUE, key: VALUE) -> VALUE {
    let args = [key];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    let fast = super::builtin_at(FAST);
    match look_up(&call, this, key, fast) {
        Lookup::Found(_) if fast => boolean(true),
        Lookup::Missing if fast => boolean(false),
        _ => call.call_super(),
    }
}

/// `dig` (and any lookup without a fast path).
unsafe extern "C" fn lookup(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    if let Some(&key) = call.args().first() {
        look_up(&call, this, key, false);
    }
    call.call_super()
}

/// Looks `key` up in `hash` (a Hash: the hooks are only prepended to
/// Hash) when it is of a built-in kind whose lookup runs no Ruby code, and
/// reports a missing one against the keys `hash` has (once an epoch for
/// one key and one first key, see [`compare_sites::fresh_values`]). Without a comparison
/// site to report to, the lookup is made only if the hook will `answer`
/// from it (its fast path is on).
fn look_up(frame: &Frame, hash: VALUE, key: VALUE, answer: bool) -> Lookup {
    let simple = value::is_fixnum(key)
        || value::is_static_symbol(key)
        || !value::is_special_const(key) && value::class_of(key) == value::string_class();
    if !simple {
        return Lookup::Unknown;
    }
    let site = compare_sites::caller(frame);
    let wanted = wanted::active();
    if site.is_none() && !answer && !wanted {
        return Lookup::Unknown;
    }
    let found = value::hash_lookup(hash, key);
    if found.is_none() && wanted {
        // A key the code looked for (in the app's code or on its behalf,
        // as a framework's params lookup); the vocabulary sifts them.
        if let Some(bytes) = frame.text_bytes(key) {
            wanted::record(bytes);
        }
    }
    let Some(site) = site else {
        return found.map_or(Lookup::Missing, Lookup::Found);
    };
    compare_sites::reach(site);
    if let Some(value) = found {
        hook::reach_key_found(site.location(), named_key(frame, key));
        return Lookup::Found(value);
    }
    // The same key missing again from a Hash that starts with the same key
    // (a Symbol, an Integer: a Hash a parser builds afresh for each input
    // has the same first key each time): its keys were just reported, and
    // reading them all is most of a miss's cost.
    let key_contents = integer_bits(key)
        .or_else(|| frame.string_bytes(key).map(path_registry::hash_bytes))
        .unwrap_or(key);
    let mut first = 0;
    value::hash_each_key(hash, |candidate| {
        first = candidate;
        false
    });
    if !compare_sites::fresh_values(site, key_contents, first) {
        return Lookup::Missing;
    }
    let mut reported = 0;
    value::hash_each_key(hash, |candidate| {
        if let (Some(a), Some(b)) = (integer_bits(key), integer_bits(candidate)) {
            compare_sites::cmp8(site, a, b);
        } else if let (Some(a), Some(b)) = (frame.text_bytes(key), frame.text_bytes(candidate)) {
            compare_sites::bytes(site, a, b);
        }
        reported += 1;
        reported < KEYS_REPORTED
    });
    Lookup::Missing
}

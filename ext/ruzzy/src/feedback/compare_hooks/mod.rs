//! Ruby methods that report comparisons to libFuzzer, then defer to the
//! original method with `super`.
//!
//! One table, [`TABLE`], lists every hook: the group it belongs to, the
//! class it is prepended to, the module that holds it, the method it
//! hooks, its function and its fast-path rule. It defines the methods of
//! the modules under `Ruzzy::CompareHooks` at `require` time and is handed
//! to Ruby as `Ruzzy::CompareHooks::TABLE`, from which
//! `lib/ruzzy/feedback/compare_hooks.rb` prepends the modules when fuzzing starts
//! (so a program that merely requires ruzzy keeps the interpreter's fast
//! paths). One module per receiver type holds the hook functions:
//! [`integer`], [`string`], [`symbol`], [`hash`], [`number`] (Floats and
//! text-to-number conversions), [`byte_reads`] (numbers read from bytes),
//! [`regexp`] (pattern matches).
//!
//! Semantics never change: each hook only reads its operands' raw contents
//! (Integers that fit in 64 bits, Strings and Symbols of any class), reports
//! them, and returns exactly what `super` returns (same block, same
//! keywords), or lets its exception propagate. Refinements at the call site
//! take precedence over the hooks, and a method the program redefines still
//! runs (it is `super` of the hook).
//!
//! Fast path: `super` costs a method lookup and a frame. A hook with a
//! [`FastPath`] may instead return what Ruby's own definition computes for
//! its operands (`rb_str_equal`, `rb_str_cmp`, Fixnum arithmetic), but only
//! while the method behind it is Ruby's own: checked when the hooks are
//! installed (`rb_method_basic_definition_p`) and tracked afterwards
//! (`method_added`, `method_removed` and `method_undefined` on the classes
//! with fast paths report to [`method_changed`]). The fast paths that call
//! the C function a method is (`rb_reg_match`, `rb_str_to_inum`...) are
//! taken only on the Rubies whose sources they were read in.
//!
//! Invariants: no allocation in a hook. Ruby code runs only in `super`, in
//! what a fast path calls in its place (`Hash#[]`'s `hash` and `eql?`,
//! `=~`'s `to_str`, as the method would) and in reads made under
//! `rb::protect` (StringScanner's `string` and `pos`); each takes the
//! hook's [`MethodCall`](crate::rb::value::MethodCall)
//! mutably, so no byte slice read before is alive, and the hook frames a
//! Ruby exception unwinds through own nothing that needs dropping.

/// Declares comparison operators with a fast path: for each, a type
/// implementing [`Operator`] with the method's name, its [`FastPath`] and
/// what Ruby's own definition returns for two operands of `$operand` (the
/// kind the hook checked).
macro_rules! operators {
    ($operand:ty; $($op:ident $name:literal $fast:ident |$a:ident, $b:ident| $result:expr;)*) => {$(
        pub struct $op;
        impl super::Operator for $op {
            type Operand = $operand;
            const NAMES: &'static [&'static std::ffi::CStr] = &[$name];
            const FAST_PATH: super::FastPath = super::FastPath::$fast;
            #[inline(always)]
            unsafe fn builtin($a: $operand, $b: $operand) -> rb_sys::VALUE {
                // SAFETY: by the caller's contract, operands of the kind the
                // hook checked.
                #[allow(unused_unsafe)]
                unsafe {
                    $result
                }
            }
        }
    )*};
}

mod array;
mod byte_reads;
mod hash;
mod integer;
pub mod number;
pub mod regexp;
mod string;
mod symbol;

use crate::rb::method::{self, Function, Visibility};
use magnus::{function, prelude::*, rb_sys::AsRawValue, Error, RModule, Ruby, Symbol, Value};
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Hooked methods that share one C function.
pub struct Hook {
    /// The methods' names.
    pub names: &'static [&'static CStr],
    /// The C function that replaces each of them (and calls `super`).
    pub function: Function,
    /// Public like the methods it wraps, or private (Kernel's functions).
    pub visibility: Visibility,
    /// Set when the hook may answer without `super` (see the module header).
    pub fast_path: Option<FastPath>,
}

impl Hook {
    /// Public hooks without a fast path.
    pub const fn new(names: &'static [&'static CStr], function: Function) -> Hook {
        Hook {
            names,
            function,
            visibility: Visibility::Public,
            fast_path: None,
        }
    }

    /// The same hook with a fast path.
    pub const fn fast(self, fast_path: FastPath) -> Hook {
        Hook {
            fast_path: Some(fast_path),
            ..self
        }
    }

    /// The same hook, private.
    pub const fn private(self) -> Hook {
        Hook {
            visibility: Visibility::Private,
            ..self
        }
    }
}

/// The hooks of one module, prepended to one class.
pub struct HookModule {
    /// The group that turns it on (`compare_hooks: %i[integer]`).
    pub group: &'static str,
    /// The class it is prepended to, by name (StringScanner may not be
    /// loaded).
    pub class: &'static CStr,
    /// Its name under `Ruzzy::CompareHooks`.
    pub module: &'static str,
    pub hooks: &'static [Hook],
}

/// Every hook module, in the order they are prepended.
pub const TABLE: &[HookModule] = &[
    integer::HOOKS,
    string::HOOKS,
    symbol::HOOKS,
    hash::HOOKS,
    array::HOOKS,
    number::FLOAT_HOOKS,
    regexp::REGEXP_HOOKS,
    regexp::STRING_HOOKS,
    regexp::SCANNER_HOOKS,
    number::KERNEL_HOOKS,
    number::STRING_HOOKS,
    byte_reads::HOOKS,
];

/// A comparison operator with a fast path (see [`operators!`]).
pub trait Operator {
    /// The operands as the hook has them (`i64` for Fixnums, the `VALUE`s
    /// of two Strings).
    type Operand: Copy;
    /// The method it hooks (one name).
    const NAMES: &'static [&'static CStr];
    const FAST_PATH: FastPath;
    /// What Ruby's own definition returns for `a OP b`.
    ///
    /// # Safety
    /// `a` and `b` are of the kind the hook checked.
    unsafe fn builtin(a: Self::Operand, b: Self::Operand) -> rb_sys::VALUE;
}

/// Declares [`FastPath`] with its variants, [`FastPath::ALL`] listing them
/// in the same order, and `FAST_PATHS`, their number.
macro_rules! fast_paths {
    ($($name:ident),* $(,)?) => {
        /// The hooks that can answer without `super`, one slot each in [`BUILTIN`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum FastPath {
            $($name),*
        }

        impl FastPath {
            /// Every fast path, in declaration order (`ALL[f as usize] == f`).
            pub const ALL: [FastPath; FAST_PATHS] = [$(FastPath::$name),*];
        }

        const FAST_PATHS: usize = [$(FastPath::$name),*].len();
    };
}

fast_paths!(
    IntegerEq,
    IntegerNe,
    IntegerLt,
    IntegerLe,
    IntegerGt,
    IntegerGe,
    IntegerCmp,
    IntegerEql,
    IntegerEqq,
    StringEq,
    StringNe,
    StringEql,
    StringEqq,
    StringCmp,
    SymbolEq,
    SymbolNe,
    SymbolEqq,
    HashAref,
    HashFetch,
    HashKey,
    HashHasKey,
    HashInclude,
    HashMember,
    ArrayInclude,
    IntegerDiv,
    IntegerMod,
    IntegerDivInt,
    IntegerModulo,
    StringGetbyte,
    RegexpMatchOperator,
    RegexpCaseEquality,
    StringToI,
    StringToF,
);

impl FastPath {
    /// Whether the fast path calls a C function of Ruby's in place of the
    /// method (`Regexp#=~`, `#===`, `String#to_i`, `#to_f`), as read in
    /// the sources of Ruby 3.1, 3.3 and 3.4 (the Rubies with a known
    /// layout). On another Ruby those hooks call `super`.
    const fn read_in_sources(self) -> bool {
        matches!(
            self,
            FastPath::RegexpMatchOperator
                | FastPath::RegexpCaseEquality
                | FastPath::StringToI
                | FastPath::StringToF
        )
    }
}

/// Whether this Ruby is one whose sources the fast paths that call C
/// functions were read in.
const SOURCES_READ: bool = cfg!(any(
    ruby_layout = "3.1",
    ruby_layout = "3.3",
    ruby_layout = "3.4"
));

/// Whether each fast path's method behind the hook is Ruby's own definition.
static BUILTIN: [AtomicBool; FAST_PATHS] = [const { AtomicBool::new(false) }; FAST_PATHS];

/// Whether `fast_path` may be taken (its method is still Ruby's own).
#[inline(always)]
pub fn builtin(fast_path: FastPath) -> bool {
    BUILTIN[fast_path as usize].load(Ordering::Relaxed)
}

/// [`builtin`] by the fast path's number (for hooks generic over it).
#[inline(always)]
pub fn builtin_at(fast_path: usize) -> bool {
    BUILTIN[fast_path].load(Ordering::Relaxed)
}

/// Every hook with a fast path, with the class it belongs to.
fn fast_paths() -> impl Iterator<Item = (&'static HookModule, &'static Hook, FastPath)> {
    TABLE.iter().flat_map(|module| {
        module
            .hooks
            .iter()
            .filter_map(move |hook| Some((module, hook, hook.fast_path?)))
    })
}

/// `CompareHooks._prepare`: called right before the hooks are prepended.
/// Records which methods behind a fast path are Ruby's own definitions, and
/// makes sure comparison sites can be located (all code counts when
/// coverage is off).
fn prepare() {
    for (module, hook, fast_path) in fast_paths() {
        let Some(class) = crate::rb::loaded_class(module.class) else {
            continue;
        };
        let basic = |name: &CStr| crate::rb::method_is_builtin(class, name);
        // `!=` calls `==`: both must be Ruby's own.
        let own = hook
            .names
            .iter()
            .all(|&name| basic(name) && (name != c"!=" || basic(c"==")));
        let known = SOURCES_READ || !fast_path.read_in_sources();
        BUILTIN[fast_path as usize].store(own && known, Ordering::Relaxed);
    }
    crate::coverage::locator::get_or_include_all();
}

/// `CompareHooks._method_changed(klass, name)`: a method of a class with
/// fast paths was defined, removed or undefined; its fast path (and that of
/// `!=` when `==` changed) is turned off for good.
fn method_changed(klass: Value, name: Symbol) -> Result<(), Error> {
    let name = name.name()?;
    for (module, hook, fast_path) in fast_paths() {
        let same_class = crate::rb::loaded_class(module.class) == Some(klass.as_raw());
        let affected = hook.names.iter().any(|&hooked| {
            hooked.to_bytes() == name.as_bytes() || (hooked == c"!=" && name == "==")
        });
        if same_class && affected {
            BUILTIN[fast_path as usize].store(false, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Defines the hook modules under `Ruzzy::CompareHooks`, and
/// `CompareHooks::TABLE`: one frozen `[group, class name, module, method
/// name, fast path?]` per hook.
pub fn define(ruby: &Ruby, ruzzy: RModule) -> Result<(), Error> {
    let hooks = ruzzy.define_module("CompareHooks")?;
    hooks.define_module_function("_prepare", function!(prepare, 0))?;
    hooks.define_module_function("_method_changed", function!(method_changed, 2))?;
    let rows = ruby.ary_new();
    for entry in TABLE {
        let module = hooks.define_module(entry.module)?;
        let class = entry.class.to_str().unwrap_or_default();
        for hook in entry.hooks {
            for &name in hook.names {
                method::define(module, name, hook.function, hook.visibility)?;
                let row = ruby.ary_new();
                row.push(ruby.to_symbol(entry.group))?;
                row.push(class)?;
                row.push(module)?;
                row.push(ruby.to_symbol(name.to_str().unwrap_or_default()))?;
                row.push(hook.fast_path.is_some())?;
                row.freeze();
                rows.push(row)?;
            }
        }
    }
    rows.freeze();
    hooks.const_set("TABLE", rows)?;
    regexp::init();
    Ok(())
}

// The table's own consistency, checked at compile time (a unit test would
// link every hook, and with them libruby, into the test binary).
const _: () = assert!(
    table_is_consistent(),
    "each fast path must belong to exactly one hook of one method and be listed in order in \
     FastPath::ALL, and no module may hook a method twice"
);

const fn table_is_consistent() -> bool {
    let mut owners = [0u8; FAST_PATHS];
    let mut m = 0;
    while m < TABLE.len() {
        let hooks = TABLE[m].hooks;
        let mut h = 0;
        while h < hooks.len() {
            if let Some(fast_path) = hooks[h].fast_path {
                owners[fast_path as usize] += 1;
                if hooks[h].names.len() != 1 {
                    return false;
                }
            }
            let mut n = 0;
            while n < hooks[h].names.len() {
                if hooked_later(hooks, h, n) {
                    return false;
                }
                n += 1;
            }
            h += 1;
        }
        m += 1;
    }
    let mut f = 0;
    while f < FAST_PATHS {
        if owners[f] != 1 || FastPath::ALL[f] as usize != f {
            return false;
        }
        f += 1;
    }
    true
}

/// Whether the `n`th name of `hooks[h]` is hooked again after it in the
/// same module.
const fn hooked_later(hooks: &[Hook], h: usize, n: usize) -> bool {
    let name = hooks[h].names[n].to_bytes();
    let mut other = h;
    let mut from = n + 1;
    while other < hooks.len() {
        let names = hooks[other].names;
        let mut i = from;
        while i < names.len() {
            if same_bytes(name, names[i].to_bytes()) {
                return true;
            }
            i += 1;
        }
        other += 1;
        from = 0;
    }
    false
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

//! Regular-expression feedback: Ruby methods that match a Regexp against a
//! String report, when the match fails, what would have matched.
//!
//! `Ruzzy::CompareHooks::{RegexpHooks, StringPatternHooks, ScannerHooks}`
//! are prepended to `Regexp`, `String` and `StringScanner` when fuzzing
//! starts (`Ruzzy::CompareHooks.install`). Each hook first calls the
//! original method (`super`, same arguments, block and keywords), so match
//! results, `$~`, `$1`, named captures and `Regexp.timeout` behave exactly
//! as without it; `$~` lands in the caller's frame because the hooks are C
//! methods, which Ruby's special variables skip. Only when the match
//! failed does the hook look at the pattern: its model (`regex_model`,
//! parsed once per Regexp object and cached in a fixed table) is run on the
//! subject to find where matching stopped (unless the same failure was
//! just modelled: [`recent_failures`] runs it again only now and then),
//! and libFuzzer gets
//! - a byte comparison of the subject from that point with a string the
//!   rest of the pattern accepts (libFuzzer writes it over the input's
//!   bytes), and
//! - a string the whole pattern accepts, as a dictionary word (its memmem
//!   hook),
//!
//! both at the caller's comparison site. String patterns (`split(",")`,
//! `sub("x", ...)`) report a substring search instead. Successful matches
//! cost the hook frame and a result check only.
//!
//! Invariants: no allocation after `init` (the cache is allocated once;
//! a pattern is parsed into its slot in place of the one it evicts); the
//! only Ruby calls are `super` and, for StringScanner, its `string` and
//! `pos` readers under `rb_protect` after `super` returned; every input
//! read is bounded by [`WINDOW`].

use super::{builtin, FastPath, Hook, HookModule};
use crate::feedback::compare_sites::{self, SiteId};
use crate::feedback::recent_failures;
use crate::feedback::regex_model::Pattern;
use crate::feedback::running_match::matching;
use crate::rb::method::Function;
use crate::rb::value::{self, Frame, MethodCall, QNIL};
use rb_sys::{ruby_value_type, VALUE};
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_int;
use std::sync::OnceLock;

pub const REGEXP_HOOKS: HookModule = HookModule {
    group: "regexp",
    class: c"Regexp",
    module: "RegexpHooks",
    hooks: &[
        Hook::new(&[c"match", c"match?"], Function::Var(regexp_match)),
        Hook::new(&[c"=~"], Function::One(regexp_operator::<false>))
            .fast(FastPath::RegexpMatchOperator),
        Hook::new(&[c"==="], Function::One(regexp_operator::<true>))
            .fast(FastPath::RegexpCaseEquality),
    ],
};

pub const STRING_HOOKS: HookModule = HookModule {
    group: "regexp",
    class: c"String",
    module: "StringPatternHooks",
    hooks: &[
        Hook::new(
            &[c"match", c"match?"],
            Function::Var(string_pattern::<FAILS_WHEN_FALSY, true>),
        ),
        Hook::new(
            &[c"=~", c"[]", c"slice"],
            Function::Var(string_pattern::<FAILS_WHEN_FALSY, false>),
        ),
        Hook::new(
            &[c"scan", c"sub", c"gsub", c"sub!", c"gsub!"],
            Function::Var(string_pattern::<FAILS_WITHOUT_MATCH_DATA, false>),
        ),
        Hook::new(
            &[c"split"],
            Function::Var(string_pattern::<FAILS_WHEN_UNSPLIT, false>),
        ),
    ],
};

pub const SCANNER_HOOKS: HookModule = HookModule {
    group: "regexp",
    class: c"StringScanner",
    module: "ScannerHooks",
    hooks: &[
        Hook::new(
            &[c"scan", c"check", c"match?", c"skip"],
            Function::Var(scanner::<true>),
        ),
        Hook::new(
            &[c"scan_until", c"check_until", c"skip_until", c"exist?"],
            Function::Var(scanner::<false>),
        ),
    ],
};

/// Patterns cached (a power of two).
const CACHE_SLOTS: usize = 512;
/// Subject bytes examined after the search start.
const WINDOW: usize = 256;
/// Longest sample proposed.
const SAMPLE: usize = 64;
/// Reports per whole-pattern dictionary word.
const WORD_EVERY: u32 = 4;

/// When a call counts as a failed match (a const parameter of the hooks):
/// the method returned nil or false (`match`, `=~`, `scan`, `[]`...).
pub const FAILS_WHEN_FALSY: u8 = 0;
/// `$~` is nil afterwards (`sub`, `gsub`, String#scan).
pub const FAILS_WITHOUT_MATCH_DATA: u8 = 1;
/// The result has at most one element (`split`).
pub const FAILS_WHEN_UNSPLIT: u8 = 2;

struct Slot {
    regexp: VALUE,
    key: u64,
    /// Failed matches of this pattern so far (see [`worth_modelling`]).
    failures: u32,
    pattern: Pattern,
}

struct Cache(UnsafeCell<Option<Box<[Slot]>>>);
// SAFETY: only used with the GVL held (module invariant).
unsafe impl Sync for Cache {}
static CACHE: Cache = Cache(UnsafeCell::new(None));

struct Variant(Cell<u32>);
// SAFETY: only used with the GVL held.
unsafe impl Sync for Variant {}
/// Advances with each report, so successive samples differ.
static VARIANT: Variant = Variant(Cell::new(0));

/// `StringScanner#string` and `#pos`, interned once.
static SCANNER_READERS: OnceLock<(rb_sys::ID, rb_sys::ID)> = OnceLock::new();

/// Allocates the pattern cache (cold; before the hooks are installed).
pub fn init() {
    SCANNER_READERS.get_or_init(|| (crate::rb::intern(c"string"), crate::rb::intern(c"pos")));
    // SAFETY: GVL held; called before any hook runs.
    let cache = unsafe { &mut *CACHE.0.get() };
    if cache.is_none() {
        let empty = Pattern::parse(b"", 0);
        let slots = (0..CACHE_SLOTS)
            .map(|_| Slot {
                regexp: 0,
                key: 0,
                failures: 0,
                pattern: empty.clone(),
            })
            .collect();
        *cache = Some(slots);
    }
}

/// The source String, its bytes and the options of a Regexp, or None for
/// anything else.
fn regexp_source(frame: &Frame, value: VALUE) -> Option<(VALUE, &[u8], u32)> {
    let (src, options) = value::regexp_source(value)?;
    Some((src, frame.string_bytes(src)?, options))
}

/// What identifies a Regexp's source without reading all of it: its
/// source String object, length, options and first and last bytes (a
/// Regexp's source is frozen; a slot reused after GC by another pattern of
/// the same length and ends only misguides feedback, never results).
fn source_key(src: VALUE, source: &[u8], options: u32) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let ends = source.iter().take(16).chain(source.iter().rev().take(16));
    for &byte in ends {
        hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
    }
    for word in [src, source.len() as u64, u64::from(options)] {
        hash = (hash ^ word).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The model of the Regexp `value`, parsed on first sight.
///
/// # Safety
/// GVL held; `value` is a Regexp whose source is `source`.
unsafe fn pattern(
    value: VALUE,
    src: VALUE,
    source: &[u8],
    options: u32,
) -> Option<&'static Pattern> {
    // SAFETY: by the caller's contract, GVL held; the reference is dropped before any
    // other hook runs.
    let slots = unsafe { &mut *CACHE.0.get() }.as_mut()?;
    let key = source_key(src, source, options);
    let index = ((value >> 3) ^ (key as VALUE)) as usize & (CACHE_SLOTS - 1);
    let slot = &mut slots[index];
    if slot.regexp != value || slot.key != key {
        slot.pattern = Pattern::parse(source, options);
        slot.regexp = value;
        slot.key = key;
        slot.failures = 0;
    }
    slot.failures = slot.failures.wrapping_add(1);
    worth_modelling(slot.failures).then_some(&slot.pattern)
}

/// Whether the `failures`th failed match of a pattern is modelled: the
/// first 256 all are, then one in four. A pattern that fails on almost
/// every input (a parser trying its token patterns in turn) keeps getting
/// feedback, at a quarter of the cost.
fn worth_modelling(failures: u32) -> bool {
    failures <= 256 || failures % 4 == 0
}

fn next_variant() -> u32 {
    let variant = VARIANT.0.get().wrapping_add(1);
    VARIANT.0.set(variant);
    variant
}

fn failed(call: &MethodCall, result: VALUE, rule: u8) -> bool {
    match rule {
        FAILS_WHEN_FALSY => !value::truthy(result),
        FAILS_WITHOUT_MATCH_DATA => call.last_match() == QNIL,
        _ => value::array_len(result).is_some_and(|len| len <= 1),
    }
}

/// A byte offset argument (`match(str, pos)`), resolved against `len`.
fn offset(value: Option<VALUE>, len: usize) -> Option<usize> {
    let Some(value) = value else {
        return Some(0);
    };
    let pos = value::fixnum_value(value)?;
    let pos = if pos < 0 { len as i64 + pos } else { pos };
    (0..=len as i64).contains(&pos).then_some(pos as usize)
}

/// Reports a failed match of `pattern` (a Regexp or a String) on
/// `subject` searched from `from`.
fn report(frame: &Frame, pattern_value: VALUE, subject: &[u8], from: usize, anchored: bool) {
    if let Some(needle) = frame.string_bytes(pattern_value) {
        let Some(site) = compare_sites::ruby_caller(frame) else {
            return;
        };
        compare_sites::reach(site);
        let rest = &subject[from.min(subject.len())..];
        if anchored {
            compare_sites::bytes(site, &rest[..rest.len().min(needle.len())], needle);
        } else {
            compare_sites::substring(site, rest, needle);
        }
        return;
    }
    let Some((src, source, options)) = regexp_source(frame, pattern_value) else {
        return;
    };
    let Some(site) = compare_sites::ruby_caller(frame) else {
        return;
    };
    compare_sites::reach(site);
    let window = &subject[..subject.len().min(from.saturating_add(WINDOW))];
    let location = site.location().unwrap_or(0);
    if !recent_failures::worth_modelling(location, pattern_value, window, from, anchored) {
        return;
    }
    // SAFETY: GVL held (a frame); `pattern_value` is a Regexp with this
    // source.
    let Some(pattern) = (unsafe { pattern(pattern_value, src, source, options) }) else {
        return;
    };
    if pattern.is_empty() {
        return;
    }
    propose(site, pattern, window, from, anchored);
}

/// The two reports for a failed match (see the module header); `window`
/// is the subject up to [`WINDOW`] bytes after `from`.
fn propose(site: SiteId, pattern: &Pattern, window: &[u8], from: usize, anchored: bool) {
    let variant = next_variant();
    let mut sample = [0u8; SAMPLE];
    if let Some(failure) = pattern.progress(window, from, anchored) {
        let len = pattern.sample(failure.node, variant, &mut sample);
        if len > 0 {
            overwrite(site, &window[failure.pos..], &sample[..len]);
        }
    }
    // The whole-pattern word changes little from one report to the next:
    // one report in WORD_EVERY carries it.
    if variant % WORD_EVERY == 0 {
        let len = pattern.sample(0, variant / WORD_EVERY, &mut sample);
        if len >= 3 {
            compare_sites::substring(site, window, &sample[..len]);
        }
    }
}

/// A byte comparison proposing `sample` over the start of `rest`; both
/// sides as long, the input's later bytes kept after a short sample.
fn overwrite(site: SiteId, rest: &[u8], sample: &[u8]) {
    let n = sample.len().clamp(2, SAMPLE);
    let mut existing = [0u8; SAMPLE];
    let mut desired = [0u8; SAMPLE];
    let have = rest.len().min(n);
    existing[..have].copy_from_slice(&rest[..have]);
    desired[..sample.len().min(n)].copy_from_slice(&sample[..sample.len().min(n)]);
    if sample.len() < have {
        desired[sample.len()..have].copy_from_slice(&rest[sample.len()..have]);
    }
    compare_sites::bytes(site, &existing[..n], &desired[..n]);
}

/// Regexp#match and #match? (pattern = self, subject = first argument,
/// optional start position).
unsafe extern "C" fn regexp_match(argc: c_int, argv: *const VALUE, this: VALUE) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = matching(this, || call.call_super());
    if failed(&call, result, FAILS_WHEN_FALSY) {
        let args = call.args();
        if let Some(subject) = args.first().and_then(|&arg| call.text_bytes(arg)) {
            if let Some(from) = offset(args.get(1).copied(), subject.len()) {
                report(&call, this, subject, from, false);
            }
        }
    }
    result
}

/// Regexp#=~ (`CASE_EQUALITY` false) and #=== (true): pattern = self,
/// subject = the argument.
unsafe extern "C" fn regexp_operator<const CASE_EQUALITY: bool>(
    this: VALUE,
    other: VALUE,
) -> VALUE {
    let args = [other];
    // SAFETY: called by the interpreter as a method with these arguments.
    let mut call = unsafe { MethodCall::with_args(&args) };
    let result = matching(this, || {
        // Ruby's own method, called directly while it is Ruby's own (`this`
        // is a Regexp: the hook is one of its methods).
        if CASE_EQUALITY {
            if builtin(FastPath::RegexpCaseEquality)
                && value::has_type(other, ruby_value_type::RUBY_T_STRING)
            {
                // SAFETY: a Regexp and a String.
                return unsafe { call.regexp_case_equality(this, other) };
            }
        } else if builtin(FastPath::RegexpMatchOperator) {
            // SAFETY: a Regexp.
            return unsafe { call.regexp_match_operator(this, other) };
        }
        call.call_super()
    });
    if failed(&call, result, FAILS_WHEN_FALSY) {
        if let Some(subject) = call.text_bytes(other) {
            report(&call, this, subject, 0, false);
        }
    }
    result
}

/// String methods taking a pattern first (subject = self). `RULE` is one
/// of the `FAILS_*` constants; `POSITIONAL` says whether a second Integer
/// argument is the start position (`match`, `match?`, `index`).
unsafe extern "C" fn string_pattern<const RULE: u8, const POSITIONAL: bool>(
    argc: c_int,
    argv: *const VALUE,
    this: VALUE,
) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let call = unsafe { MethodCall::variadic(argc, argv) };
    string_pattern_call::<RULE, POSITIONAL>(call, this)
}

/// The body of [`string_pattern`], also used by `String#index` with a
/// Regexp.
pub fn string_pattern_call<const RULE: u8, const POSITIONAL: bool>(
    mut call: MethodCall,
    this: VALUE,
) -> VALUE {
    let result = matching(call.first(), || call.call_super());
    let args = call.args();
    if let (Some(&pattern), Some(subject)) = (args.first(), call.string_bytes(this)) {
        if failed(&call, result, RULE) {
            let position = if POSITIONAL {
                args.get(1).copied()
            } else {
                None
            };
            if let Some(from) = offset(position, subject.len()) {
                report(&call, pattern, subject, from, false);
            }
        }
    }
    result
}

/// StringScanner methods: the pattern is the first argument, the subject
/// the scanner's string from its position. `ANCHORED` for the methods that
/// match only at the position (`scan`, `check`, `match?`, `skip`).
unsafe extern "C" fn scanner<const ANCHORED: bool>(
    argc: c_int,
    argv: *const VALUE,
    this: VALUE,
) -> VALUE {
    // SAFETY: called by the interpreter as a method of arity -1.
    let mut call = unsafe { MethodCall::variadic(argc, argv) };
    let result = matching(call.first(), || call.call_super());
    if let (Some(&pattern), true) = (call.args().first(), failed(&call, result, FAILS_WHEN_FALSY)) {
        let Some(&(string_id, pos_id)) = SCANNER_READERS.get() else {
            return result;
        };
        // The scanner's own readers, under rb_protect: a subclass that
        // overrides them and raises changes nothing (the error is dropped,
        // nothing is reported).
        let (Ok(string), Ok(pos)) = (call.send(this, string_id), call.send(this, pos_id)) else {
            return result;
        };
        if let Some(subject) = call.string_bytes(string) {
            if let Some(from) = offset(Some(pos), subject.len()) {
                report(&call, pattern, subject, from, ANCHORED);
            }
        }
    }
    result
}

/// String#start_with? with a Regexp argument that did not match `this`.
pub fn start_with_failed(call: &MethodCall, this: VALUE, pattern: VALUE) {
    if call.string_bytes(pattern).is_some() {
        return;
    }
    if let Some(subject) = call.string_bytes(this) {
        report(call, pattern, subject, 0, true);
    }
}

/// `Ruzzy::Native._regexp_words(regexp)`: dictionary words from a Regexp: its
/// literal runs of at least two bytes and a string the whole pattern
/// accepts (binary Strings). Not a hook: used once per Regexp literal
/// when fuzzing starts.
pub fn regexp_words(regexp: magnus::Value) -> Result<magnus::RArray, magnus::Error> {
    use magnus::rb_sys::AsRawValue;
    let ruby = magnus::Ruby::get_with(regexp);
    let words = ruby.ary_new();
    // SAFETY: called by the interpreter as a function; the source is
    // parsed before any Ruby code runs.
    let frame = unsafe { Frame::enter() };
    let Some((_, source, options)) = regexp_source(&frame, regexp.as_raw()) else {
        return Ok(words);
    };
    let pattern = Pattern::parse(source, options);
    let mut found: Vec<Vec<u8>> = Vec::new();
    pattern.literals(2, |run| found.push(run.to_vec()));
    let mut sample = [0u8; SAMPLE];
    let len = pattern.sample(0, 0, &mut sample);
    if len >= 2 {
        found.push(sample[..len].to_vec());
    }
    for word in found {
        words.push(ruby.str_from_slice(&word))?;
    }
    Ok(words)
}

/// Test probe (`Ruzzy::Native._probe_regexp_model(regexp, input, variant)`),
/// for the differential fuzz target of the model: `[matches, sample,
/// truncated]`, whether the model matches `input` (nil when its step budget
/// ran out), the string the model proposes for the whole pattern with this
/// `variant` (nil when it filled the buffer, so may be cut short), and
/// whether the source had more than the model holds.
pub fn probe_model(
    regexp: magnus::Value,
    input: magnus::RString,
    variant: u32,
) -> Result<(Option<bool>, Option<magnus::RString>, bool), magnus::Error> {
    use magnus::rb_sys::AsRawValue;
    let ruby = magnus::Ruby::get_with(regexp);
    // SAFETY: called by the interpreter as a function; both Strings are read
    // before any Ruby code runs.
    let frame = unsafe { Frame::enter() };
    let (Some((_, source, options)), Some(subject)) = (
        regexp_source(&frame, regexp.as_raw()),
        frame.string_bytes(input.as_raw()),
    ) else {
        return Err(magnus::Error::new(
            ruby.exception_type_error(),
            "expected a Regexp and a String",
        ));
    };
    let pattern = Pattern::parse(source, options);
    let matches = pattern.matches(subject);
    let mut sample = [0u8; SAMPLE];
    let len = pattern.sample(0, variant, &mut sample);
    let sample = (len < SAMPLE).then(|| ruby.str_from_slice(&sample[..len]));
    Ok((matches, sample, pattern.truncated()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_from_either_end() {
        let fix = |n: i64| ((n << 1) | 1) as VALUE;
        assert_eq!(offset(None, 5), Some(0));
        assert_eq!(offset(Some(fix(2)), 5), Some(2));
        assert_eq!(offset(Some(fix(-2)), 5), Some(3));
        assert_eq!(offset(Some(fix(6)), 5), None);
    }

    #[test]
    fn frequent_failures_are_sampled() {
        let modelled = (1..=1280).filter(|&n| worth_modelling(n)).count();
        assert_eq!(modelled, 256 + 256);
    }

    #[test]
    fn source_keys_tell_options_apart() {
        assert_ne!(source_key(8, b"abc", 0), source_key(8, b"abc", 1));
        assert_ne!(source_key(8, b"abc", 0), source_key(8, b"abd", 0));
        assert_ne!(source_key(8, b"abc", 0), source_key(16, b"abc", 0));
    }
}

//! Structure-aware mutation of typed inputs (`Ruzzy.fuzz(target, *generators)`):
//! libFuzzer's custom mutator and crossover, in Rust, following the shape
//! of the target's arguments ([`schema`]) through the bytes of each input
//! ([`layout`]) to change one value at a time ([`mutations`]).
//!
//! `Ruzzy::Native._fuzz` registers the schema before the driver starts;
//! [`super::custom_mutator`]'s hooks then call [`mutate`] and
//! [`crossover`] (a custom mutator written in Ruby takes precedence).
//!
//! Invariants: the schema is set at most once, before libFuzzer runs, and
//! only read afterwards; the hooks run on the fuzzing thread, allocate
//! nothing once their buffers have grown, and take no lock.

mod layout;
mod mutations;
mod schema;

use crate::feedback;
use magnus::{prelude::*, Error, IntoValue, RArray, RModule, RString, Ruby, Symbol, Value};
use mutations::{ByteMutator, Kind, Scratch};
use schema::Schema;
use std::cell::RefCell;
use std::sync::OnceLock;

static SCHEMA: OnceLock<Schema> = OnceLock::new();

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Defines `Ruzzy::Native::SCHEMA_NODE_KINDS`, the names of the kinds of
/// node by their tag (the Ruby side's schema builder numbers them so).
pub fn define(ruby: &Ruby, native: RModule) -> Result<(), Error> {
    let kinds = ruby.ary_from_iter(schema::KINDS.iter().map(|kind| ruby.to_symbol(kind)));
    native.const_set("SCHEMA_NODE_KINDS", kinds)
}

/// The schema of `description` (`[nodes, roots, pools]`, from
/// `Ruzzy::Gen::Arguments#schema`).
fn build(ruby: &Ruby, description: Value) -> Result<Schema, Error> {
    let (nodes, roots, pool_list): (Vec<Vec<i64>>, Vec<i64>, RArray) =
        magnus::TryConvert::try_convert(description)?;
    let mut pools = Vec::with_capacity(pool_list.len());
    for index in 0..pool_list.len() {
        let pool: RArray = pool_list.entry(index as isize)?;
        let mut words = Vec::with_capacity(pool.len());
        for at in 0..pool.len() {
            let word: RString = pool.entry(at as isize)?;
            // SAFETY: copied before any Ruby code runs.
            words.push(unsafe { word.as_slice() }.to_vec());
        }
        pools.push(words);
    }
    Schema::build(&nodes, &roots, &pools).map_err(|message| {
        Error::new(
            ruby.exception_arg_error(),
            format!("bad generator schema: {message}"),
        )
    })
}

/// Records the schema of the typed target about to be fuzzed (nil: the
/// target takes bytes). Called once, before the driver starts.
pub fn register(ruby: &Ruby, description: Value) -> Result<(), Error> {
    if description.is_nil() {
        return Ok(());
    }
    let schema = build(ruby, description)?;
    feedback::wanted::set_vocabulary(&schema.words);
    let _ = SCHEMA.set(schema);
    Ok(())
}

/// Whether a typed target's inputs are mutated by structure.
pub fn active() -> bool {
    SCHEMA.get().is_some()
}

/// Mutates the `size` bytes at `data` (room for `max_size`) in place;
/// None when there is no schema or the input is too large to read by
/// structure (the caller mutates it as bytes).
pub fn mutate(
    data: *mut u8,
    size: usize,
    max_size: usize,
    seed: u32,
    bytes: ByteMutator,
) -> Option<usize> {
    let schema = SCHEMA.get()?;
    SCRATCH.with_borrow_mut(|scratch| {
        // SAFETY: libFuzzer's buffer holds `size` bytes; it is only read
        // until the result, built apart in `scratch.out`, is copied back.
        let input = unsafe { std::slice::from_raw_parts(data, size) };
        let wanted =
            feedback::wanted::pick(u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32);
        if !mutations::mutate(schema, input, max_size, seed, wanted, scratch, bytes) {
            return None;
        }
        let length = scratch.out.len().min(max_size);
        // SAFETY: libFuzzer's buffer has room for `max_size` bytes, and
        // `scratch.out` is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(scratch.out.as_ptr(), data, length) };
        Some(length)
    })
}

/// Crosses two inputs into `out` (room for `max_size`); 0 when there is no
/// schema or they share no value of one generator.
pub fn crossover(first: &[u8], second: &[u8], out: *mut u8, max_size: usize, seed: u32) -> usize {
    let Some(schema) = SCHEMA.get() else {
        return 0;
    };
    SCRATCH.with_borrow_mut(|scratch| {
        if !mutations::crossover(schema, first, second, max_size, seed, scratch) {
            return 0;
        }
        let length = scratch.out.len().min(max_size);
        // SAFETY: libFuzzer's output buffer has room for `max_size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(scratch.out.as_ptr(), out, length) };
        length
    })
}

/// Test probe `_probe_structure_layout(schema, data)`: `[node, start, end,
/// next]` of every value of `data`, in reading order (`next`: the index of
/// the first value after the ones inside it).
pub fn probe_layout(ruby: &Ruby, description: Value, data: RString) -> Result<RArray, Error> {
    let schema = build(ruby, description)?;
    let mut spans = Vec::new();
    // SAFETY: the bytes are read before any Ruby code runs.
    layout::read(&schema, unsafe { data.as_slice() }, &mut spans);
    let result = ruby.ary_new_capa(spans.len());
    for span in spans {
        result.push((span.node, span.start, span.end, span.next))?;
    }
    Ok(result)
}

/// Test probe `_probe_structure_mutate(schema, data, max_size, kind)`: one
/// mutation of `kind` (`:leaf`, `:array`, `:choice`, `:copy`; a leaf when
/// the input has nothing of that kind), seeded by the input's bytes, with
/// [`mutations::mark`] as the leaf mutator, so that a test can see which
/// values changed. Returns `[kind made, bytes]`, or nil when the input is
/// mutated as bytes.
pub fn probe_mutate(
    ruby: &Ruby,
    description: Value,
    data: RString,
    max_size: usize,
    kind: Symbol,
) -> Result<Value, Error> {
    let schema = build(ruby, description)?;
    let kinds = [Kind::Leaf, Kind::Array, Kind::Choice, Kind::Copy];
    let Some(&kind) = kinds
        .iter()
        .find(|candidate| kind.name().is_ok_and(|name| name == candidate.name()))
    else {
        return Err(Error::new(
            ruby.exception_arg_error(),
            format!("unknown mutation kind {kind:?}"),
        ));
    };
    // SAFETY: copied before any Ruby code runs.
    let input = unsafe { data.as_slice() }.to_vec();
    let mut scratch = Scratch::default();
    let mut rng = mutations::Rng::new(seed_of(&input));
    Ok(
        match mutations::mutate_as(
            kind,
            &schema,
            &input,
            max_size,
            &mut rng,
            &mut scratch,
            mutations::Mutators {
                bytes: &mut mutations::mark,
                wanted: None,
            },
        ) {
            Some(made) => (
                ruby.to_symbol(made.name()),
                ruby.str_from_slice(&scratch.out),
            )
                .into_value_with(ruby),
            None => ruby.qnil().as_value(),
        },
    )
}

/// Test probe `_probe_structure_wanted(schema, data, word)`: `data` with
/// a pool choice set to `word` as if the target had wanted it, or nil when
/// no pool of the schema holds it or the input has no choice of one.
pub fn probe_wanted(
    ruby: &Ruby,
    description: Value,
    data: RString,
    word: RString,
) -> Result<Option<RString>, Error> {
    let schema = build(ruby, description)?;
    // SAFETY: copied before any Ruby code runs.
    let (input, word) = unsafe { (data.as_slice().to_vec(), word.as_slice().to_vec()) };
    let Some(number) = schema.words.iter().position(|known| *known == word) else {
        return Ok(None);
    };
    let mut scratch = Scratch::default();
    let made = mutations::mutate_as(
        Kind::Wanted,
        &schema,
        &input,
        input.len() + 8,
        &mut mutations::Rng::new(seed_of(&input)),
        &mut scratch,
        mutations::Mutators {
            bytes: &mut mutations::mark,
            wanted: Some(number as u32),
        },
    );
    Ok((made == Some(Kind::Wanted)).then(|| ruby.str_from_slice(&scratch.out)))
}

/// A seed from the bytes (the probe's mutations vary with the input).
fn seed_of(input: &[u8]) -> u32 {
    input.iter().fold(17u32, |hash, &byte| {
        hash.wrapping_mul(31).wrapping_add(u32::from(byte))
    })
}

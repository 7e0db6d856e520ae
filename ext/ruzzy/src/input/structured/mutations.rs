//! Structure-aware mutation and crossover of typed inputs.
//!
//! An input is read into spans ([`super::layout`]); one mutation then
//! rewrites the bytes of one span and leaves every other byte as it was, so
//! every other value decodes as before:
//! - a leaf (integer, float, boolean, pool index, string, byte string) is
//!   mutated by the byte mutator given (libFuzzer's own, so that its
//!   comparison tables and dictionary still land inside typed values); a
//!   string's length prefix is rewritten to the new length;
//! - an array gains an element (new, or a copy of one of its own), loses
//!   one, or has two swapped;
//! - a choice switches to another alternative, with a new value;
//! - a value is replaced by another value of the same generator found
//!   elsewhere in the input;
//! - a pool choice (`Gen.from` of Strings) becomes a word the target
//!   wanted (`feedback::wanted`: a Hash key it missed, a detector's canary
//!   form), when the input has a choice of a pool that holds it, or a
//!   `one_of` that leads to one (switched to it).
//!
//! Crossover replaces a value of the first input by a value of the same
//! generator from the second, or splices two arrays of the same generator.
//!
//! Invariants: no allocation once the scratch buffers have grown to their
//! largest; the result is at most `max_size` bytes; every byte string is a
//! valid input (the generators read any bytes), so a mutation can only
//! make a different value, never an invalid one.

use super::layout::{self, copy_range, Span};
use super::schema::{choices, Node, Schema};

/// Buffers kept from one mutation to the next.
#[derive(Default)]
pub struct Scratch {
    spans: Vec<Span>,
    other: Vec<Span>,
    piece: Vec<u8>,
    leaf: Vec<u8>,
    /// The inputs rewritten by [`complete_cut_string`].
    completed: [Vec<u8>; 2],
    /// The mutated input.
    pub out: Vec<u8>,
}

/// Mutates the bytes of one leaf in place: `(buffer, size, max_size)` →
/// new size, as `LLVMFuzzerMutate` (`buffer` holds `max_size` bytes).
pub type ByteMutator<'a> = &'a mut dyn FnMut(&mut [u8], usize, usize) -> usize;

/// A leaf mutator that always changes the leaf's bytes: inverts the low
/// bit of its first byte, or makes an empty string "\x01" (the test
/// probe's, so that a test sees which value changed).
pub fn mark(buffer: &mut [u8], size: usize, max_size: usize) -> usize {
    if size == 0 {
        buffer[0] = 1;
        return 1.min(max_size);
    }
    buffer[0] ^= 1;
    size
}

/// Most bytes a new value (an inserted element, a switched choice) takes.
const NEW_VALUE_BYTES: usize = 256;

/// A small generator of random numbers (splitmix64), seeded by libFuzzer.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u32) -> Rng {
        Rng(u64::from(seed) ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `bound` (which is not 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// Mutates `data` into `scratch.out`; false when it is not read as
/// structured (more than layout::MAX_SPANS values, or no value to mutate):
/// then the caller mutates the bytes as a whole.
pub fn mutate(
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    seed: u32,
    wanted: Option<u32>,
    scratch: &mut Scratch,
    byte_mutator: ByteMutator,
) -> bool {
    let mut rng = Rng::new(seed);
    let kind = match rng.below(10) {
        0..=1 => Kind::Array,
        2 => Kind::Choice,
        3 => Kind::Copy,
        4 if wanted.is_some() => Kind::Wanted,
        _ => Kind::Leaf,
    };
    mutate_as(
        kind,
        schema,
        data,
        max_size,
        &mut rng,
        scratch,
        Mutators {
            bytes: byte_mutator,
            wanted,
        },
    )
    .is_some()
}

/// What a mutation draws on besides the schema: libFuzzer's byte mutator
/// for a leaf, and the number of a word the target wanted (Schema::words).
pub struct Mutators<'a> {
    pub bytes: ByteMutator<'a>,
    pub wanted: Option<u32>,
}

/// The kinds of mutation (see the module's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Leaf,
    Array,
    Choice,
    Copy,
    Wanted,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Leaf => "leaf",
            Kind::Array => "array",
            Kind::Choice => "choice",
            Kind::Copy => "copy",
            Kind::Wanted => "wanted",
        }
    }
}

/// Mutates `data` by a mutation of `kind`, or of a leaf when the input has
/// nothing of that kind; returns the kind made (None: not read as
/// structured, or nothing to mutate).
pub fn mutate_as(
    kind: Kind,
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    rng: &mut Rng,
    scratch: &mut Scratch,
    mutators: Mutators,
) -> Option<Kind> {
    let mut completed = std::mem::take(&mut scratch.completed[0]);
    let made = read_complete(schema, data, &mut scratch.spans, &mut completed).and_then(|data| {
        let made = match kind {
            Kind::Array => array_mutation(schema, data, max_size, rng, scratch),
            Kind::Choice => choice_switch(schema, data, max_size, rng, scratch),
            Kind::Copy => same_generator_copy(data, max_size, rng, scratch),
            Kind::Wanted => mutators
                .wanted
                .is_some_and(|word| wanted_choice(schema, data, max_size, word, rng, scratch)),
            Kind::Leaf => false,
        };
        if made {
            Some(kind)
        } else {
            leaf_mutation(schema, data, max_size, rng, scratch, mutators.bytes)
                .then_some(Kind::Leaf)
        }
    });
    scratch.completed[0] = completed;
    made
}

/// Reads `data` into `spans` (None when it cannot be read by structure),
/// first completing a string cut short by the end of the input
/// ([`complete_cut_string`], into `completed`). Returns the input read.
fn read_complete<'a>(
    schema: &Schema,
    data: &'a [u8],
    spans: &mut Vec<Span>,
    completed: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    if !layout::read(schema, data, spans) || spans.is_empty() {
        return None;
    }
    if !complete_cut_string(schema, data, spans, completed) {
        return Some(data);
    }
    layout::read(schema, completed, spans).then_some(&completed[..])
}

/// Past the end of an input, a string is only as long as the bytes left
/// (ByteReader#bytes), whatever its length prefix says; any byte written
/// past the end would lengthen it. So when the input ends inside a string,
/// `completed` becomes the input with that string's prefix set to the
/// length read (the same values, in bytes that stay so when more follow).
/// False when no string is cut short.
fn complete_cut_string(
    schema: &Schema,
    data: &[u8],
    spans: &[Span],
    completed: &mut Vec<u8>,
) -> bool {
    let cut = spans.iter().find_map(|span| match schema.nodes[span.node] {
        Node::Bytes { width, .. } if span.end > data.len() && span.end > span.start + width => {
            Some((span, width))
        }
        _ => None,
    });
    let Some((span, width)) = cut else {
        return false;
    };
    let payload = span.start + width;
    let present = data.len().saturating_sub(payload);
    completed.clear();
    copy_range(data, 0, span.start, completed);
    completed.extend_from_slice(&(present as u32).to_le_bytes()[..width]);
    completed.extend_from_slice(&data[payload.min(data.len())..]);
    true
}

/// Crosses `data1` with `data2` into `scratch.out`; false when they share
/// no value of the same generator.
pub fn crossover(
    schema: &Schema,
    data1: &[u8],
    data2: &[u8],
    max_size: usize,
    seed: u32,
    scratch: &mut Scratch,
) -> bool {
    let [mut completed1, mut completed2] = std::mem::take(&mut scratch.completed);
    let done = match (
        read_complete(schema, data1, &mut scratch.spans, &mut completed1),
        read_complete(schema, data2, &mut scratch.other, &mut completed2),
    ) {
        (Some(data1), Some(data2)) => cross(schema, data1, data2, max_size, seed, scratch),
        _ => false,
    };
    scratch.completed = [completed1, completed2];
    done
}

fn cross(
    schema: &Schema,
    data1: &[u8],
    data2: &[u8],
    max_size: usize,
    seed: u32,
    scratch: &mut Scratch,
) -> bool {
    let mut rng = Rng::new(seed);
    for _ in 0..8 {
        let target_index = rng.below(scratch.spans.len());
        let target = scratch.spans[target_index];
        let matching = |span: &Span| span.node == target.node && span.budget == target.budget;
        let Some(source_index) = pick(&scratch.other, &mut rng, matching) else {
            continue;
        };
        let source = scratch.other[source_index];
        scratch.piece.clear();
        if let (Node::Array { max, .. }, true) = (&schema.nodes[target.node], rng.below(2) == 0) {
            // Splice: the first elements of one array, then the last of the other.
            let keep = rng.below(target.count + 1);
            let skip = rng.below(source.count + 1);
            let count = (keep + source.count - skip).min(*max);
            scratch.piece.push(count as u8);
            let taken = keep.min(count);
            for element in elements(&scratch.spans, target_index).take(taken) {
                copy_range(data1, element.start, element.end, &mut scratch.piece);
            }
            for element in elements(&scratch.other, source_index)
                .skip(skip)
                .take(count - taken)
            {
                copy_range(data2, element.start, element.end, &mut scratch.piece);
            }
        } else {
            copy_range(data2, source.start, source.end, &mut scratch.piece);
        }
        replace(scratch, data1, target, max_size);
        return true;
    }
    false
}

/// The index of a random span for which `wanted` holds (two passes, no
/// allocation).
fn pick(spans: &[Span], rng: &mut Rng, wanted: impl Fn(&Span) -> bool) -> Option<usize> {
    let count = spans.iter().filter(|span| wanted(span)).count();
    if count == 0 {
        return None;
    }
    let nth = rng.below(count);
    spans
        .iter()
        .enumerate()
        .filter(|(_, span)| wanted(span))
        .nth(nth)
        .map(|(index, _)| index)
}

/// The element spans of the array at `spans[index]`.
fn elements(spans: &[Span], index: usize) -> impl Iterator<Item = Span> + '_ {
    let mut at = index + 1;
    (0..spans[index].count).map(move |_| {
        let element = spans[at];
        at = element.next;
        element
    })
}

/// `data` with `span`'s bytes replaced by `scratch.piece` (zeros fill any
/// gap past the end of `data`), cut to `max_size`, into `scratch.out`.
fn replace(scratch: &mut Scratch, data: &[u8], span: Span, max_size: usize) {
    let out = &mut scratch.out;
    out.clear();
    copy_range(data, 0, span.start, out);
    out.extend_from_slice(&scratch.piece);
    if span.end < data.len() {
        out.extend_from_slice(&data[span.end..]);
    }
    out.truncate(max_size);
}

fn leaf_mutation(
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    rng: &mut Rng,
    scratch: &mut Scratch,
    byte_mutator: ByteMutator,
) -> bool {
    let is_leaf = |span: &Span| match schema.nodes[span.node] {
        Node::Fixed { width, .. } => width > 0,
        Node::Bytes { max, .. } => max > 0,
        _ => false,
    };
    let Some(index) = pick(&scratch.spans, rng, is_leaf) else {
        return false;
    };
    let span = scratch.spans[index];
    let piece = &mut scratch.piece;
    piece.clear();
    match schema.nodes[span.node] {
        Node::Fixed { width, .. } => {
            copy_range(data, span.start, span.end, piece);
            let size = byte_mutator(piece, width, width);
            piece.truncate(size);
            piece.resize(width, 0);
        }
        Node::Bytes { width, max } => {
            let payload = span.start + width;
            let suffix = data.len().saturating_sub(span.end);
            let room = max.min(max_size.saturating_sub(payload + suffix)).max(1);
            let leaf = &mut scratch.leaf;
            leaf.clear();
            leaf.extend_from_slice(&data[payload.min(data.len())..span.end.min(data.len())]);
            leaf.truncate(room);
            let size = leaf.len();
            leaf.resize(room, 0);
            let size = byte_mutator(leaf, size, room).min(room).min(max);
            piece.extend_from_slice(&(size as u32).to_le_bytes()[..width]);
            piece.extend_from_slice(&leaf[..size]);
        }
        _ => unreachable!("picked a leaf"),
    }
    replace(scratch, data, span, max_size);
    true
}

/// Sets a value of the input to word number `word`: a choice of a pool
/// that holds it, or a choice with a way down to such a pool (switched to
/// it); false when the input has neither.
fn wanted_choice(
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    word: u32,
    rng: &mut Rng,
    scratch: &mut Scratch,
) -> bool {
    let Some(pools) = schema.choices_of_word.get(word as usize) else {
        return false;
    };
    // The way from `span` to a pool giving the word, and the word's index there.
    let way = |span: &Span| {
        pools.iter().find_map(|&(pool, index)| {
            if span.node == pool {
                return Some((None, pool, index));
            }
            let ways = &schema.ways_down[pool];
            let found = ways.binary_search_by_key(&span.node, |way| way.node).ok()?;
            (span.budget > 0).then_some((Some(ways[found]), pool, index))
        })
    };
    let Some(index) = pick(&scratch.spans, rng, |span| way(span).is_some()) else {
        return false;
    };
    let span = scratch.spans[index];
    let Some((down, pool, value)) = way(&span) else {
        return false;
    };
    let Node::Fixed { width, .. } = schema.nodes[pool] else {
        return false;
    };
    scratch.piece.clear();
    if let Some(down) = down {
        scratch
            .piece
            .extend_from_slice(&down.positions[..down.depth]);
    }
    scratch
        .piece
        .extend_from_slice(&value.to_le_bytes()[..width.min(4)]);
    replace(scratch, data, span, max_size);
    true
}

fn array_mutation(
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    rng: &mut Rng,
    scratch: &mut Scratch,
) -> bool {
    let is_array = |span: &Span| matches!(schema.nodes[span.node], Node::Array { .. });
    let Some(index) = pick(&scratch.spans, rng, is_array) else {
        return false;
    };
    let array = scratch.spans[index];
    let Node::Array { max, element, .. } = schema.nodes[array.node] else {
        unreachable!("picked an array");
    };
    let count = array.count;
    let (mut remove, mut insert, mut swap) = (None, None, None);
    match rng.below(3) {
        0 if count < max => insert = Some(rng.below(count + 1)),
        1 if count > 0 => remove = Some(rng.below(count)),
        2 if count > 1 => swap = Some((rng.below(count), rng.below(count))),
        _ if count < max => insert = Some(rng.below(count + 1)),
        _ if count > 0 => remove = Some(rng.below(count)),
        _ => return false,
    }
    let new_count = count + usize::from(insert.is_some()) - usize::from(remove.is_some());
    scratch.other.clear();
    scratch.other.extend(elements(&scratch.spans, index));
    let nth = |n: usize| scratch.other[n];
    let piece = &mut scratch.piece;
    piece.clear();
    piece.push(new_count as u8);
    for position in 0..=count {
        if insert == Some(position) {
            if count > 0 && rng.below(2) == 0 {
                let copied = nth(rng.below(count));
                copy_range(data, copied.start, copied.end, piece);
            } else {
                let limit = piece.len() + NEW_VALUE_BYTES.min(max_size.saturating_sub(data.len()));
                generate(schema, element, array.budget, rng, piece, limit);
            }
        }
        if position == count || remove == Some(position) {
            continue;
        }
        let source = match swap {
            Some((a, b)) if position == a => nth(b),
            Some((a, b)) if position == b => nth(a),
            _ => nth(position),
        };
        copy_range(data, source.start, source.end, piece);
    }
    replace(scratch, data, array, max_size);
    true
}

fn choice_switch(
    schema: &Schema,
    data: &[u8],
    max_size: usize,
    rng: &mut Rng,
    scratch: &mut Scratch,
) -> bool {
    let switchable = |span: &Span| match &schema.nodes[span.node] {
        Node::Choice {
            alternatives,
            ending,
        } => choices(alternatives, ending, span.budget).len() > 1,
        _ => false,
    };
    let Some(index) = pick(&scratch.spans, rng, switchable) else {
        return false;
    };
    let span = scratch.spans[index];
    let Node::Choice {
        alternatives,
        ending,
    } = &schema.nodes[span.node]
    else {
        unreachable!("picked a choice");
    };
    let open = choices(alternatives, ending, span.budget);
    let position = (span.count + 1 + rng.below(open.len() - 1)) % open.len();
    let piece = &mut scratch.piece;
    piece.clear();
    piece.push(position as u8);
    let limit = NEW_VALUE_BYTES.min(max_size.saturating_sub(data.len()));
    generate(
        schema,
        alternatives[open.get(position)],
        span.budget,
        rng,
        piece,
        limit,
    );
    replace(scratch, data, span, max_size);
    true
}

fn same_generator_copy(data: &[u8], max_size: usize, rng: &mut Rng, scratch: &mut Scratch) -> bool {
    // From a random value on, the first (of at most 16) that has another
    // value of its generator and budget in the input.
    let count = scratch.spans.len();
    let first = rng.below(count);
    for offset in 0..count.min(16) {
        let target = scratch.spans[(first + offset) % count];
        let matching = |span: &Span| {
            span.node == target.node && span.budget == target.budget && *span != target
        };
        let Some(source) = pick(&scratch.spans, rng, matching) else {
            continue;
        };
        let source = scratch.spans[source];
        scratch.piece.clear();
        copy_range(data, source.start, source.end, &mut scratch.piece);
        replace(scratch, data, target, max_size);
        return true;
    }
    false
}

/// Appends the bytes of a new random value of node `id` (read with
/// `budget`): short strings, arrays of up to three elements; once `out`
/// holds `limit` bytes, the smallest values (empty arrays, the choices
/// that end).
pub fn generate(
    schema: &Schema,
    id: usize,
    budget: i64,
    rng: &mut Rng,
    out: &mut Vec<u8>,
    limit: usize,
) {
    let (id, budget) = schema.resolve(id, budget);
    let full = out.len() >= limit;
    match &schema.nodes[id] {
        Node::Fixed { width, .. } => {
            let bytes = rng.next().to_le_bytes();
            out.extend_from_slice(&bytes[..*width]);
        }
        Node::Bytes { width, max } => {
            let length = if full {
                0
            } else {
                rng.below((*max).min(16) + 1)
            };
            out.extend_from_slice(&(length as u32).to_le_bytes()[..*width]);
            out.extend((0..length).map(|_| rng.next() as u8));
        }
        Node::Choice {
            alternatives,
            ending,
        } => {
            let open = choices(alternatives, ending, budget);
            let position = if full && !ending.is_empty() {
                // An alternative that ends, written as its position among the open ones.
                let alternative = ending[rng.below(ending.len())];
                (0..open.len())
                    .find(|&at| open.get(at) == alternative)
                    .unwrap_or(0)
            } else {
                rng.below(open.len())
            };
            out.push(position as u8);
            generate(
                schema,
                alternatives[open.get(position)],
                budget,
                rng,
                out,
                limit,
            );
        }
        Node::Array {
            max,
            element,
            recursive,
        } => {
            let count = if full || (*recursive && budget <= 0) {
                0
            } else {
                rng.below((*max).min(3) + 1)
            };
            out.push(count as u8);
            for _ in 0..count {
                generate(schema, *element, budget, rng, out, limit);
            }
        }
        Node::Sequence { children } => {
            for &child in children {
                generate(schema, child, budget, rng, out, limit);
            }
        }
        Node::Recursive { .. } | Node::Ref { .. } => unreachable!("resolved above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// integer, array(bytes(max_length: 5), max_length: 4), one_of(boolean, integer)
    fn schema() -> Schema {
        Schema::build(
            &[
                vec![0, 8],
                vec![3, 4, 2, 0],
                vec![1, 1, 5],
                vec![2, 4, 1, 0, 1],
                vec![0, 1],
            ],
            &[0, 1, 3],
            &[],
        )
        .unwrap()
    }

    /// The values of `data` as the layout reads them: each leaf's bytes
    /// (a string without its length prefix), in order.
    fn leaves(schema: &Schema, data: &[u8]) -> Vec<Vec<u8>> {
        let mut spans = Vec::new();
        assert!(layout::read(schema, data, &mut spans));
        spans
            .iter()
            .filter_map(|span| match schema.nodes[span.node] {
                Node::Fixed { width, .. } if width > 0 => {
                    let mut bytes = Vec::new();
                    copy_range(data, span.start, span.end, &mut bytes);
                    Some(bytes)
                }
                Node::Bytes { width, .. } => {
                    let start = (span.start + width).min(data.len());
                    Some(data[start..span.end.min(data.len())].to_vec())
                }
                Node::Array { .. } => Some(vec![0xAA, span.count as u8]),
                Node::Choice { .. } => Some(vec![0xCC, span.count as u8]),
                _ => None,
            })
            .collect()
    }

    /// A mutation of `kind` whose leaves libFuzzer's stand-in marks, with
    /// no wanted word.
    fn marked(
        kind: Kind,
        schema: &Schema,
        data: &[u8],
        rng: &mut Rng,
        scratch: &mut Scratch,
    ) -> Option<Kind> {
        let mutators = Mutators {
            bytes: &mut mark,
            wanted: None,
        };
        mutate_as(kind, schema, data, 4096, rng, scratch, mutators)
    }

    fn random_input(rng: &mut Rng) -> Vec<u8> {
        let length = rng.below(40);
        (0..length).map(|_| rng.next() as u8).collect()
    }

    #[test]
    fn a_leaf_mutation_changes_one_value_and_nothing_else() {
        let schema = schema();
        let mut scratch = Scratch::default();
        let mut rng = Rng::new(7);
        for seed in 0..2_000 {
            let data = random_input(&mut rng);
            let before = leaves(&schema, &data);
            let made = marked(
                Kind::Leaf,
                &schema,
                &data,
                &mut Rng::new(seed),
                &mut scratch,
            );
            assert_eq!(made, Some(Kind::Leaf));
            let after = leaves(&schema, &scratch.out);
            assert_eq!(before.len(), after.len(), "{data:?}");
            let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
            assert_eq!(changed, 1, "{data:?} -> {:?}", scratch.out);
        }
    }

    #[test]
    fn array_mutations_keep_the_other_arguments() {
        let schema = schema();
        let mut scratch = Scratch::default();
        let mut rng = Rng::new(3);
        let mut counts = [0usize; 3];
        for _ in 0..2_000 {
            let data = random_input(&mut rng);
            let before = leaves(&schema, &data);
            let mut inner = Rng::new(rng.next() as u32);
            let made = marked(Kind::Array, &schema, &data, &mut inner, &mut scratch);
            if made != Some(Kind::Array) {
                continue;
            }
            let after = leaves(&schema, &scratch.out);
            // The integer before the array and the choice after it are untouched.
            assert_eq!(before[0], after[0]);
            assert_eq!(before[before.len() - 2..], after[after.len() - 2..]);
            let (old, new) = (before[1][1] as usize, after[1][1] as usize);
            counts[(new + 1).saturating_sub(old).min(2)] += 1;
            assert!(new.abs_diff(old) <= 1 && new <= 4);
        }
        assert!(counts.iter().all(|&count| count > 100), "{counts:?}");
    }

    #[test]
    fn results_never_exceed_max_size() {
        let schema = schema();
        let mut scratch = Scratch::default();
        let mut rng = Rng::new(11);
        let mut grow = |buffer: &mut [u8], _size: usize, max: usize| {
            buffer[..max].fill(b'x');
            max
        };
        for seed in 0..2_000 {
            let data = random_input(&mut rng);
            let max_size = data.len().max(1);
            if mutate(
                &schema,
                &data,
                max_size,
                seed,
                None,
                &mut scratch,
                &mut grow,
            ) {
                assert!(scratch.out.len() <= max_size);
            }
        }
    }

    #[test]
    fn crossover_takes_a_value_of_the_same_generator() {
        let schema = schema();
        let mut scratch = Scratch::default();
        let first = [1, 0, 0, 0, 0, 0, 0, 0, 1, 2, b'a', b'b', 0, 1];
        let second = [
            9, 9, 9, 9, 9, 9, 9, 9, 2, 1, b'z', 3, b'q', b'r', b's', 0, 2,
        ];
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            assert!(crossover(
                &schema,
                &first,
                &second,
                4096,
                seed,
                &mut scratch
            ));
            let values = leaves(&schema, &scratch.out);
            seen.insert(values.clone());
            for (index, value) in values.iter().enumerate() {
                let known = leaves(&schema, &first).contains(value)
                    || leaves(&schema, &second).contains(value);
                assert!(known || index == 1, "{values:?}");
            }
        }
        assert!(seen.len() > 3, "{seen:?}");
    }

    #[test]
    fn a_wanted_word_sets_a_pool_choice_that_holds_it() {
        // integer, from(["a", "b", "c"]), from(["c", "d"])
        let pools = [
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()],
            vec![b"c".to_vec(), b"d".to_vec()],
        ];
        let schema = Schema::build(
            &[vec![0, 8], vec![0, 1, 0], vec![0, 1, 1]],
            &[0, 1, 2],
            &pools,
        )
        .unwrap();
        let number =
            |word: &[u8]| schema.words.iter().position(|known| known == word).unwrap() as u32;
        let data = [7, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let mut scratch = Scratch::default();
        let mut wanted = |word: &[u8], seed: u32| {
            let made = mutate_as(
                Kind::Wanted,
                &schema,
                &data,
                4096,
                &mut Rng::new(seed),
                &mut scratch,
                Mutators {
                    bytes: &mut mark,
                    wanted: Some(number(word)),
                },
            );
            (made, scratch.out.clone())
        };
        assert_eq!(
            wanted(b"b", 1),
            (Some(Kind::Wanted), vec![7, 0, 0, 0, 0, 0, 0, 0, 1, 1])
        );
        assert_eq!(
            wanted(b"d", 1),
            (Some(Kind::Wanted), vec![7, 0, 0, 0, 0, 0, 0, 0, 0, 1])
        );
        // "c" is in both pools: either choice takes it.
        let outs: std::collections::BTreeSet<_> =
            (0..20).map(|seed| wanted(b"c", seed).1).collect();
        assert!(
            outs.contains(&vec![7, 0, 0, 0, 0, 0, 0, 0, 2, 1]),
            "{outs:?}"
        );
        assert!(
            outs.contains(&vec![7, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            "{outs:?}"
        );
    }
}

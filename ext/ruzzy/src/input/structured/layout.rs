//! Where each value of a typed input lies in its bytes: the input read by
//! the schema's rules (the generators' `read`), recorded as spans, one per
//! node read, in reading order (a node before the nodes inside it).
//!
//! Offsets are those of the reading, which goes on past the end of the
//! input as if it were followed by zeros (as `Ruzzy::Gen::ByteReader`
//! does): a span may end, or even start, past the end.
//!
//! Invariants: `read` allocates nothing once `spans` has grown to its
//! largest (the caller keeps it); it records at most [`MAX_SPANS`] spans
//! and says when the input held more.

use super::schema::{choices, Node, Schema, UNLIMITED};

/// Most spans one input is read into (a larger input is mutated as bytes).
pub const MAX_SPANS: usize = 1 << 14;

/// One node's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The node read (never a `Ref` nor a `Recursive`: the node they stand for).
    pub node: usize,
    /// The depth budget it was read with.
    pub budget: i64,
    pub start: usize,
    pub end: usize,
    /// The index of the first span after the ones inside this one.
    pub next: usize,
    /// For an array, its element count; for a choice, the position of its
    /// alternative among the open ones.
    pub count: usize,
}

/// The byte at `at` of `data` followed by zeros.
pub fn byte_at(data: &[u8], at: usize) -> u8 {
    data.get(at).copied().unwrap_or(0)
}

/// Appends `data[start..end]`, zeros past the end of `data`.
pub fn copy_range(data: &[u8], start: usize, end: usize, out: &mut Vec<u8>) {
    let present = start.min(data.len())..end.min(data.len());
    out.extend_from_slice(&data[present.clone()]);
    out.resize(out.len() + (end - start - present.len()), 0);
}

/// Reads `data` as the schema's arguments into `spans` (cleared first);
/// false when the input holds more than [`MAX_SPANS`] spans (`spans` is
/// then incomplete).
pub fn read(schema: &Schema, data: &[u8], spans: &mut Vec<Span>) -> bool {
    spans.clear();
    let mut reader = Reader {
        schema,
        data,
        spans,
        pos: 0,
    };
    schema
        .roots
        .iter()
        .all(|&root| reader.node(root, UNLIMITED))
}

struct Reader<'a> {
    schema: &'a Schema,
    data: &'a [u8],
    spans: &'a mut Vec<Span>,
    pos: usize,
}

impl Reader<'_> {
    fn unsigned(&mut self, width: usize) -> usize {
        let value = (0..width).fold(0u64, |value, shift| {
            value | (u64::from(byte_at(self.data, self.pos + shift)) << (8 * shift))
        });
        self.pos += width;
        usize::try_from(value).unwrap_or(usize::MAX)
    }

    fn node(&mut self, id: usize, budget: i64) -> bool {
        if self.spans.len() >= MAX_SPANS {
            return false;
        }
        let (id, budget) = self.schema.resolve(id, budget);
        let index = self.spans.len();
        let start = self.pos;
        self.spans.push(Span {
            node: id,
            budget,
            start,
            end: start,
            next: index + 1,
            count: 0,
        });
        let schema = self.schema;
        let complete = match &schema.nodes[id] {
            Node::Fixed { width, .. } => {
                self.pos += width;
                true
            }
            Node::Bytes { width, max } => {
                let length = self.unsigned(*width) % (max + 1);
                self.pos += length;
                true
            }
            Node::Choice {
                alternatives,
                ending,
            } => {
                let open = choices(alternatives, ending, budget);
                let position = usize::from(byte_at(self.data, self.pos)) % open.len();
                self.pos += 1;
                self.spans[index].count = position;
                self.node(alternatives[open.get(position)], budget)
            }
            Node::Array {
                max,
                element,
                recursive,
            } => {
                let mut count = usize::from(byte_at(self.data, self.pos)) % (max + 1);
                if *recursive && budget <= 0 {
                    count = 0;
                }
                self.pos += 1;
                self.spans[index].count = count;
                (0..count).all(|_| self.node(*element, budget))
            }
            Node::Sequence { children } => children.iter().all(|&child| self.node(child, budget)),
            Node::Recursive { .. } | Node::Ref { .. } => unreachable!("resolved above"),
        };
        let next = self.spans.len();
        let span = &mut self.spans[index];
        span.end = self.pos;
        span.next = next;
        complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(descriptions: &[Vec<i64>], roots: &[i64]) -> Schema {
        Schema::build(descriptions, roots, &[]).unwrap()
    }

    #[test]
    fn reads_fixed_and_bytes_past_the_end() {
        // integer, bytes(max_length: 3)
        let schema = schema(&[vec![0, 8], vec![1, 1, 3]], &[0, 1]);
        let mut spans = Vec::new();
        assert!(read(
            &schema,
            &[1, 2, 3, 4, 5, 6, 7, 8, 6, b'a', b'b'],
            &mut spans
        ));
        let ranges: Vec<_> = spans.iter().map(|span| (span.start, span.end)).collect();
        // length 6 % 4 = 2
        assert_eq!(ranges, [(0, 8), (8, 11)]);
        assert!(read(&schema, &[], &mut spans));
        assert_eq!(spans[1].start..spans[1].end, 8..9);
    }

    #[test]
    fn reads_arrays_and_choices_with_the_depth_limit() {
        // recursive(max_depth: 1) { |s| one_of(integer, array(s, max_length: 3)) }
        let schema = schema(
            &[
                vec![5, 1, 1],
                vec![2, 2, 1, 3, 0],
                vec![0, 8],
                vec![3, 3, 4, 1],
                vec![6, 0],
            ],
            &[0],
        );
        let mut spans = Vec::new();
        // choice 1 (array), count 2, two elements at depth 0: choice byte
        // 1 means the integer (the only ending alternative), 8 bytes each.
        let mut data = vec![1, 2, 1];
        data.extend([0; 8]);
        data.push(5);
        assert!(read(&schema, &data, &mut spans));
        let kinds: Vec<_> = spans
            .iter()
            .map(|span| (span.node, span.budget, span.start, span.end))
            .collect();
        assert_eq!(
            kinds,
            [
                (1, 1, 0, 20),
                (3, 1, 1, 20),
                (1, 0, 2, 11),
                (2, 0, 3, 11),
                (1, 0, 11, 20),
                (2, 0, 12, 20)
            ]
        );
        assert_eq!(spans[1].count, 2);
        assert_eq!(spans[1].next, 6);
        assert_eq!(spans[2].next, 4);
    }

    #[test]
    fn stops_at_the_span_limit() {
        // array(array(constant, max_length: 255), max_length: 255)
        let schema = schema(&[vec![3, 255, 1, 0], vec![3, 255, 2, 0], vec![0, 0]], &[0]);
        let mut spans = Vec::new();
        assert!(!read(&schema, &[255; 300], &mut spans));
        assert_eq!(spans.len(), MAX_SPANS);
    }
}

//! The shape of a typed target's input: the generators of its arguments
//! (`Ruzzy::Gen`) as a graph of nodes, built from the flat description
//! `Ruzzy::Gen::Arguments#schema` gives (one Array of Integers per node).
//!
//! Each node reads its bytes exactly as its generator's `read` does
//! (lib/ruzzy/gen/generators.rb, composites.rb): [`super::layout`] follows
//! these rules, and test/unit/test_structured_mutation.rb checks that both
//! agree on every generator.
//!
//! Invariants: every node id in the graph is in range, every width is one
//! the generators use, and a `Ref` names a `Recursive` node. A schema that
//! breaks them is refused when it is built, so the mutator never checks.

/// The kinds of node, by name; a node's description starts with the index
/// of its kind (`Ruzzy::Native::SCHEMA_NODE_KINDS` for the Ruby side).
pub const KINDS: [&str; 7] = [
    "fixed",
    "bytes",
    "choice",
    "array",
    "sequence",
    "recursive",
    "ref",
];
const FIXED: i64 = 0;
const BYTES: i64 = 1;
const CHOICE: i64 = 2;
const ARRAY: i64 = 3;
const SEQUENCE: i64 = 4;
const RECURSIVE: i64 = 5;
const REF: i64 = 6;

/// One generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// `width` bytes (0 to 8) read as one value: integers, floats, booleans,
    /// pool indices, constants (width 0).
    Fixed { width: usize },
    /// A little-endian length of `width` bytes taken modulo `max + 1`, then
    /// that many bytes.
    Bytes { width: usize, max: usize },
    /// One byte picks an alternative (modulo their number); at the depth
    /// limit only the alternatives that end (do not recurse) are counted.
    Choice {
        alternatives: Vec<usize>,
        ending: Vec<usize>,
    },
    /// One byte gives the count (modulo `max + 1`; 0 at the depth limit
    /// when the element recurses), then the elements.
    Array {
        max: usize,
        element: usize,
        recursive: bool,
    },
    /// The children one after another (structs, hash pairs).
    Sequence { children: Vec<usize> },
    /// The inner node with the depth budget reset to `max_depth`.
    Recursive { max_depth: i64, inner: usize },
    /// The inner node of the `Recursive` node `owner`, one level deeper.
    Ref { owner: usize },
}

/// The generators of a typed target: its nodes and one root per argument.
#[derive(Debug, Clone)]
pub struct Schema {
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
}

impl Schema {
    /// The schema of `descriptions` (one per node) and `roots`, or what is
    /// wrong with them.
    pub fn build(descriptions: &[Vec<i64>], roots: &[i64]) -> Result<Schema, String> {
        let count = descriptions.len();
        let id = |value: i64| -> Result<usize, String> {
            usize::try_from(value)
                .ok()
                .filter(|&id| id < count)
                .ok_or_else(|| format!("node id {value} out of range (0..{count})"))
        };
        let nodes = descriptions
            .iter()
            .map(|description| Self::node(description, &id))
            .collect::<Result<Vec<_>, _>>()?;
        let roots = roots
            .iter()
            .map(|&root| id(root))
            .collect::<Result<Vec<_>, _>>()?;
        for node in &nodes {
            if let Node::Ref { owner } = node {
                if !matches!(nodes[*owner], Node::Recursive { .. }) {
                    return Err(format!("node {owner} is not a recursive node"));
                }
            }
        }
        Ok(Schema { nodes, roots })
    }

    fn node(
        description: &[i64],
        id: &impl Fn(i64) -> Result<usize, String>,
    ) -> Result<Node, String> {
        let bad = || format!("bad node description {description:?}");
        let (&kind, fields) = description.split_first().ok_or_else(bad)?;
        let width = |value: i64| match value {
            0..=8 => Ok(value as usize),
            _ => Err(bad()),
        };
        let size = |value: i64| usize::try_from(value).map_err(|_| bad());
        Ok(match (kind, fields) {
            (FIXED, &[bytes]) => Node::Fixed {
                width: width(bytes)?,
            },
            (BYTES, &[length, max]) if [1, 2, 4].contains(&length) => Node::Bytes {
                width: width(length)?,
                max: size(max)?,
            },
            (CHOICE, pairs) if !pairs.is_empty() && pairs.len() % 2 == 0 => {
                let mut alternatives = Vec::with_capacity(pairs.len() / 2);
                let mut ending = Vec::new();
                for (index, pair) in pairs.chunks(2).enumerate() {
                    alternatives.push(id(pair[0])?);
                    if pair[1] != 0 {
                        ending.push(index);
                    }
                }
                Node::Choice {
                    alternatives,
                    ending,
                }
            }
            (ARRAY, &[max, element, recursive]) if (0..=255).contains(&max) => Node::Array {
                max: max as usize,
                element: id(element)?,
                recursive: recursive != 0,
            },
            (SEQUENCE, children) => Node::Sequence {
                children: children
                    .iter()
                    .map(|&child| id(child))
                    .collect::<Result<_, _>>()?,
            },
            (RECURSIVE, &[max_depth, inner]) if max_depth > 0 => Node::Recursive {
                max_depth,
                inner: id(inner)?,
            },
            (REF, &[owner]) => Node::Ref { owner: id(owner)? },
            _ => return Err(bad()),
        })
    }

    /// The node `id` stands for (through `Ref`s, which read their owner's
    /// inner node one level deeper, and `Recursive`s, which reset the
    /// budget) and the budget it reads with.
    pub fn resolve(&self, mut id: usize, mut budget: i64) -> (usize, i64) {
        loop {
            (id, budget) = match self.nodes[id] {
                Node::Ref { owner } => match self.nodes[owner] {
                    Node::Recursive { inner, .. } => (inner, budget - 1),
                    _ => unreachable!("checked in Schema::build"),
                },
                Node::Recursive { max_depth, inner } => (inner, max_depth),
                _ => return (id, budget),
            };
        }
    }
}

/// The budget outside any recursive generator (Ruzzy::Gen::UNLIMITED).
pub const UNLIMITED: i64 = 1 << 30;

/// The alternatives a choice may pick with `budget` left: all, or at the
/// depth limit those that end (when there are any).
pub fn choices<'a>(alternatives: &'a [usize], ending: &'a [usize], budget: i64) -> Choices<'a> {
    if budget > 0 || ending.is_empty() {
        Choices::All(alternatives.len())
    } else {
        Choices::Ending(ending)
    }
}

/// Which alternatives of a choice are open (indices into its alternatives).
pub enum Choices<'a> {
    All(usize),
    Ending(&'a [usize]),
}

impl Choices<'_> {
    pub fn len(&self) -> usize {
        match self {
            Choices::All(count) => *count,
            Choices::Ending(ending) => ending.len(),
        }
    }

    /// The alternative at `position` among the open ones.
    pub fn get(&self, position: usize) -> usize {
        match self {
            Choices::All(_) => position,
            Choices::Ending(ending) => ending[position],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_kind() {
        let schema = Schema::build(
            &[
                vec![0, 8],
                vec![1, 1, 10],
                vec![2, 0, 1, 3, 0],
                vec![3, 4, 4, 1],
                vec![6, 5],
                vec![5, 3, 2],
                vec![4, 0, 1],
            ],
            &[5, 6],
        )
        .unwrap();
        assert_eq!(
            schema.nodes[2],
            Node::Choice {
                alternatives: vec![0, 3],
                ending: vec![0]
            }
        );
        assert_eq!(schema.resolve(4, 3), (2, 2));
        assert_eq!(schema.resolve(5, UNLIMITED), (2, 3));
    }

    #[test]
    fn refuses_bad_descriptions() {
        assert!(Schema::build(&[vec![0, 9]], &[0]).is_err());
        assert!(Schema::build(&[vec![1, 3, 10]], &[0]).is_err());
        assert!(Schema::build(&[vec![0, 8]], &[1]).is_err());
        assert!(Schema::build(&[vec![6, 0]], &[0]).is_err());
        assert!(Schema::build(&[vec![2]], &[0]).is_err());
        assert!(Schema::build(&[vec![3, 256, 0, 0]], &[0]).is_err());
        assert!(Schema::build(&[vec![]], &[0]).is_err());
    }
}

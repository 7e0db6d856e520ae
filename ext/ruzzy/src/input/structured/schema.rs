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
//! the generators use, a `Ref` names a `Recursive` node, and a pool fits
//! its node's width. A schema that
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
    /// pool indices, constants (width 0). A pool index of a pool of Strings
    /// names the pool.
    Fixed { width: usize, pool: Option<usize> },
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

/// The generators of a typed target: its nodes and one root per argument;
/// the Strings its pools hold, each word once, and for each word the pool
/// choices that give it (node, index); for each pool node, the choices
/// above it that can lead to it ([`WayDown`], sorted by choice node).
#[derive(Debug, Clone)]
pub struct Schema {
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    pub words: Vec<Vec<u8>>,
    pub choices_of_word: Vec<Vec<(usize, u32)>>,
    pub ways_down: Vec<Vec<WayDown>>,
}

/// How many choices a [`WayDown`] goes through.
pub const WAY_DOWN_DEPTH: usize = 2;

/// A choice that leads to a pool node through choices alone: the positions
/// to pick, from the choice `node` down (as read with a budget above 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WayDown {
    pub node: usize,
    pub positions: [u8; WAY_DOWN_DEPTH],
    pub depth: usize,
}

impl Schema {
    /// The schema of `descriptions` (one per node), `roots` and `pools`
    /// (the Strings of the pools a `Fixed` node may name; an empty one for
    /// a value that is not a String), or what is wrong with them.
    pub fn build(
        descriptions: &[Vec<i64>],
        roots: &[i64],
        pools: &[Vec<Vec<u8>>],
    ) -> Result<Schema, String> {
        let count = descriptions.len();
        let id = |value: i64| -> Result<usize, String> {
            usize::try_from(value)
                .ok()
                .filter(|&id| id < count)
                .ok_or_else(|| format!("node id {value} out of range (0..{count})"))
        };
        let nodes = descriptions
            .iter()
            .map(|description| Self::node(description, &id, pools.len()))
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
        let (words, choices_of_word) = Self::words(&nodes, pools)?;
        let mut schema = Schema {
            nodes,
            roots,
            words,
            choices_of_word,
            ways_down: Vec::new(),
        };
        schema.ways_down = schema.ways_down();
        Ok(schema)
    }

    /// For each node, the choices that lead down to it when it is a pool.
    fn ways_down(&self) -> Vec<Vec<WayDown>> {
        let mut ways = vec![Vec::new(); self.nodes.len()];
        for (id, node) in self.nodes.iter().enumerate() {
            if matches!(node, Node::Choice { .. }) {
                let mut positions = [0; WAY_DOWN_DEPTH];
                self.walk_down(id, id, 0, &mut positions, &mut ways);
            }
        }
        for list in &mut ways {
            list.sort_by_key(|way: &WayDown| way.node);
            list.dedup_by_key(|way| way.node);
        }
        ways
    }

    fn walk_down(
        &self,
        top: usize,
        choice: usize,
        depth: usize,
        positions: &mut [u8; WAY_DOWN_DEPTH],
        ways: &mut [Vec<WayDown>],
    ) {
        let Node::Choice { alternatives, .. } = &self.nodes[choice] else {
            return;
        };
        for (position, &alternative) in alternatives.iter().enumerate().take(256) {
            positions[depth] = position as u8;
            positions[depth + 1..].fill(0);
            // (A recursive generator's budget may close alternatives: not followed.)
            let (child, _) = self.resolve(alternative, UNLIMITED);
            if child != alternative {
                continue;
            }
            match self.nodes[child] {
                Node::Fixed { pool: Some(_), .. } => ways[child].push(WayDown {
                    node: top,
                    positions: *positions,
                    depth: depth + 1,
                }),
                Node::Choice { .. } if depth + 1 < WAY_DOWN_DEPTH => {
                    self.walk_down(top, child, depth + 1, positions, ways);
                }
                _ => {}
            }
        }
    }

    /// Each distinct word of the pools the nodes name, and the choices
    /// that give it.
    #[allow(clippy::type_complexity)]
    fn words(
        nodes: &[Node],
        pools: &[Vec<Vec<u8>>],
    ) -> Result<(Vec<Vec<u8>>, Vec<Vec<(usize, u32)>>), String> {
        let mut numbers: std::collections::HashMap<&[u8], usize> = Default::default();
        let mut words = Vec::new();
        let mut choices: Vec<Vec<(usize, u32)>> = Vec::new();
        for (id, node) in nodes.iter().enumerate() {
            let &Node::Fixed {
                width,
                pool: Some(pool),
            } = node
            else {
                continue;
            };
            let entries = &pools[pool];
            if width == 0 || width > 4 || entries.len() > 1usize << (8 * width) {
                return Err(format!(
                    "pool {pool} does not fit node {id}'s {width} bytes"
                ));
            }
            for (index, word) in entries.iter().enumerate() {
                if word.is_empty() {
                    continue;
                }
                let number = *numbers.entry(word).or_insert_with(|| {
                    words.push(word.clone());
                    choices.push(Vec::new());
                    words.len() - 1
                });
                choices[number].push((id, index as u32));
            }
        }
        Ok((words, choices))
    }

    fn node(
        description: &[i64],
        id: &impl Fn(i64) -> Result<usize, String>,
        pools: usize,
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
                pool: None,
            },
            (FIXED, &[bytes, pool]) => Node::Fixed {
                width: width(bytes)?,
                pool: Some(
                    usize::try_from(pool)
                        .ok()
                        .filter(|&pool| pool < pools)
                        .ok_or_else(bad)?,
                ),
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
            &[],
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
        assert!(Schema::build(&[vec![0, 9]], &[0], &[]).is_err());
        assert!(Schema::build(&[vec![1, 3, 10]], &[0], &[]).is_err());
        assert!(Schema::build(&[vec![0, 8]], &[1], &[]).is_err());
        assert!(Schema::build(&[vec![6, 0]], &[0], &[]).is_err());
        assert!(Schema::build(&[vec![2]], &[0], &[]).is_err());
        assert!(Schema::build(&[vec![3, 256, 0, 0]], &[0], &[]).is_err());
        assert!(Schema::build(&[vec![]], &[0], &[]).is_err());
        // A pool out of range, or larger than its node's width holds.
        assert!(Schema::build(&[vec![0, 1, 1]], &[0], &[vec![]]).is_err());
        let big = vec![vec![b'x']; 257];
        assert!(Schema::build(&[vec![0, 1, 0]], &[0], &[big]).is_err());
    }

    #[test]
    fn numbers_each_word_of_the_pools_once() {
        let pools = [
            vec![b"a".to_vec(), b"b".to_vec()],
            vec![b"b".to_vec(), vec![], b"c".to_vec()],
        ];
        let schema =
            Schema::build(&[vec![0, 1, 0], vec![0, 2, 1], vec![4, 0, 1]], &[2], &pools).unwrap();
        assert_eq!(schema.words, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(
            schema.choices_of_word,
            [vec![(0, 0)], vec![(0, 1), (1, 0)], vec![(1, 2)]]
        );
    }

    #[test]
    fn a_pool_is_reached_from_the_choices_above_it() {
        // one_of(integer, one_of(from(pool 0), bytes)), and from(pool 0) alone
        let pools = [vec![b"a".to_vec()]];
        let schema = Schema::build(
            &[
                vec![0, 8],
                vec![0, 1, 0],
                vec![1, 1, 5],
                vec![2, 1, 1, 2, 1],
                vec![2, 0, 1, 3, 1],
            ],
            &[4, 1],
            &pools,
        )
        .unwrap();
        let way = |node, positions, depth| WayDown {
            node,
            positions,
            depth,
        };
        assert_eq!(schema.ways_down[1], [way(3, [0, 0], 1), way(4, [1, 0], 2)]);
        assert!(schema.ways_down[0].is_empty());
    }
}

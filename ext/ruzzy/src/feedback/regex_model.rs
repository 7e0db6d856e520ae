//! A model of a Ruby regular expression, good enough to tell the fuzzer
//! what would have matched: never used to decide a match.
//!
//! [`Pattern::parse`] reads a Regexp's source (Onigmo's Ruby syntax) into
//! a fixed-size, flat tree: literal bytes, byte classes, groups of
//! alternatives, anchors, each with a repetition range. What the model does
//! not know (conditionals, absent operators, class intersections past the
//! first operand, more than [`MAX_NODES`] nodes) ends the model there: the
//! pattern is then modelled by its prefix.
//!
//! [`Pattern::progress`] runs the model on an input (greedy, with bounded
//! backtracking over repetitions) and returns where the furthest attempt
//! failed: the node and the input position. [`Pattern::sample`] writes a
//! string that the model accepts from a given node to the end of the
//! pattern, choosing among alternatives and class members by a `variant`
//! number, so that successive reports propose different ways to match.
//!
//! The model reads bytes: a class (`.`, `\w`, `[^a]`...) matches one byte,
//! where Ruby matches one character, so on non-ASCII text it may miss a
//! match Ruby finds. On ASCII text a complete model (not truncated) is
//! coarser than Onigmo, never stricter (lookarounds and `\b` assert
//! nothing, a backreference matches any text), which
//! `test/fuzz_targets/regexp_model.rb` checks against Ruby's Regexp.
//!
//! Invariants: no allocation anywhere (a `Pattern` is a plain value of
//! fixed size); every loop is bounded by the pattern size, the input
//! length or [`STEP_BUDGET`]; parsing never fails (it truncates).

/// Most nodes a pattern model holds.
pub const MAX_NODES: usize = 96;
/// Most distinct byte classes a pattern model holds.
const MAX_CLASSES: usize = 24;
/// Most recursive steps one `progress` call takes.
const STEP_BUDGET: u32 = 512;
/// Repetitions written into a sample for an unbounded repetition.
const SAMPLE_REPEAT_CAP: u16 = 3;
/// Class members a sample chooses from.
const PICKS: usize = 16;
/// Deepest group nesting modelled.
const MAX_DEPTH: usize = 16;
/// "No limit" for a repetition's maximum.
const UNBOUNDED: u16 = u16::MAX;
/// "No node" for a parent link.
const NONE: u16 = u16::MAX;

/// Onigmo option bits (`Regexp#options`).
pub const IGNORECASE: u32 = 1;
const EXTENDED: u32 = 2;
const MULTILINE: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// One byte.
    Byte(u8),
    /// One byte from `classes[index]`.
    Class(u8),
    /// A group; its alternatives are the nodes up to `end` (exclusive),
    /// separated by `Alt` nodes whose parent is this group.
    Group { end: u16 },
    /// Separates the alternatives of the enclosing group.
    Alt,
    /// `\A`, `\G`: the start of the search.
    Start,
    /// `^`: the start of a line.
    LineStart,
    /// `\z`: the end of the input.
    End,
    /// `\Z`: the end, or before a final newline.
    EndOrNewline,
    /// `$`: the end of a line.
    LineEnd,
    /// Zero-width assertions the model does not check (`\b`, lookaround,
    /// backreferences).
    Empty,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    min: u16,
    max: u16,
    /// Case-insensitive (ASCII letters).
    fold: bool,
    /// The enclosing group, or NONE at the top level.
    parent: u16,
}

/// A byte set.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, byte: u8) {
        self.0[(byte >> 6) as usize] |= 1 << (byte & 63);
    }

    fn insert_range(&mut self, low: u8, high: u8) {
        for byte in low..=high {
            self.insert(byte);
        }
    }

    fn contains(&self, byte: u8) -> bool {
        self.0[(byte >> 6) as usize] & (1 << (byte & 63)) != 0
    }

    fn union(&mut self, other: &ByteSet) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    fn negate(&mut self) {
        for word in &mut self.0 {
            *word = !*word;
        }
    }

    fn len(&self) -> u32 {
        self.0.iter().map(|word| word.count_ones()).sum()
    }

    /// The members `nth` chooses among: the printable ASCII ones
    /// (0x20..0x7e) when there are any, else all.
    fn pool(&self) -> ByteSet {
        let printable = ByteSet([0xffff_ffff_0000_0000, 0x7fff_ffff_ffff_ffff, 0, 0]);
        let mut preferred = *self;
        for (word, mask) in preferred.0.iter_mut().zip(printable.0) {
            *word &= mask;
        }
        if preferred.len() > 0 {
            preferred
        } else {
            *self
        }
    }

    /// How many members `nth` chooses among.
    fn nth_count(&self) -> u32 {
        self.pool().len()
    }

    /// The `n`th member (modulo the size), preferring printable ASCII:
    /// members 0x20..0x7e come first.
    fn nth(&self, n: u32) -> Option<u8> {
        let pool = self.pool();
        let total = pool.len();
        if total == 0 {
            return None;
        }
        let mut rank = n % total;
        for (index, &word) in pool.0.iter().enumerate() {
            let count = word.count_ones();
            if rank < count {
                let mut bits = word;
                for _ in 0..rank {
                    bits &= bits - 1;
                }
                return Some((index * 64) as u8 + bits.trailing_zeros() as u8);
            }
            rank -= count;
        }
        None
    }
}

/// Where the model stopped matching an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The node that did not match.
    pub node: usize,
    /// The input position it was tried at.
    pub pos: usize,
}

/// What one search of the model found.
enum Outcome {
    Matched,
    /// No match: where the furthest attempt failed, and whether the step
    /// budget ran out before every start position was tried.
    Failed {
        furthest: Option<Failure>,
        exhausted: bool,
    },
}

/// A parsed regular expression (see the module header).
#[derive(Clone)]
pub struct Pattern {
    nodes: [Node; MAX_NODES],
    len: usize,
    classes: [ByteSet; MAX_CLASSES],
    /// Members of each class that samples use (see [`ByteSet::nth`]),
    /// spread over the class, and how many.
    picks: [[u8; PICKS]; MAX_CLASSES],
    pick_counts: [u8; MAX_CLASSES],
    class_count: usize,
    /// Whether the source had more than the model holds.
    truncated: bool,
    /// Whether the pattern can only match at the start of the search.
    anchored: bool,
}

const EMPTY_NODE: Node = Node {
    kind: Kind::Empty,
    min: 1,
    max: 1,
    fold: false,
    parent: NONE,
};

impl Pattern {
    /// The model of a Regexp with this source and these options.
    pub fn parse(source: &[u8], options: u32) -> Pattern {
        let mut pattern = Pattern {
            nodes: [EMPTY_NODE; MAX_NODES],
            len: 0,
            classes: [ByteSet::default(); MAX_CLASSES],
            picks: [[0; PICKS]; MAX_CLASSES],
            pick_counts: [0; MAX_CLASSES],
            class_count: 0,
            truncated: false,
            anchored: false,
        };
        let mut parser = Parser {
            source,
            at: 0,
            pattern: &mut pattern,
            extended: options & EXTENDED != 0,
            multiline: options & MULTILINE != 0,
        };
        let fold = options & IGNORECASE != 0;
        if parser.alternatives(fold, NONE, 0).is_err() {
            parser.pattern.truncated = true;
        }
        pattern.anchored = pattern.starts_anchored();
        pattern
    }

    /// Whether the model holds no node that matches anything.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every match must begin where the search begins (`\A`).
    #[cfg(test)]
    pub fn anchored(&self) -> bool {
        self.anchored
    }

    fn starts_anchored(&self) -> bool {
        let mut i = 0;
        // A leading group without alternatives, not optional: look inside it.
        while i < self.len {
            match self.nodes[i].kind {
                Kind::Start => return true,
                Kind::Group { end }
                    if self.nodes[i].min > 0 && !self.has_alternatives(i, end as usize) =>
                {
                    i += 1
                }
                _ => return false,
            }
        }
        false
    }

    fn has_alternatives(&self, group: usize, end: usize) -> bool {
        (group + 1..end)
            .any(|i| self.nodes[i].kind == Kind::Alt && self.nodes[i].parent as usize == group)
    }

    /// Where the model stops matching `input`, trying each start position
    /// from `from` (only `from` itself when `anchored`). None when the
    /// model matches (a match Ruby did not find: the model is coarser).
    pub fn progress(&self, input: &[u8], from: usize, anchored: bool) -> Option<Failure> {
        match self.search(input, from, anchored) {
            Outcome::Matched => None,
            Outcome::Failed { furthest, .. } => furthest,
        }
    }

    /// Whether the model matches `input` anywhere: always when Ruby's
    /// Regexp does (the model is coarser, never stricter). None when the
    /// step budget ran out first. The differential fuzz target checks it.
    pub fn matches(&self, input: &[u8]) -> Option<bool> {
        match self.search(input, 0, false) {
            Outcome::Matched => Some(true),
            Outcome::Failed {
                exhausted: true, ..
            } => None,
            Outcome::Failed { .. } => Some(false),
        }
    }

    fn search(&self, input: &[u8], from: usize, anchored: bool) -> Outcome {
        let last_start = if anchored || self.anchored {
            from
        } else {
            input.len()
        };
        let mut best: Option<(Failure, usize)> = None;
        let mut budget = STEP_BUDGET;
        for start in from..=last_start.min(input.len()) {
            let mut run = Run {
                pattern: self,
                input,
                origin: from,
                budget: &mut budget,
                best: None,
            };
            if run.alternatives(NONE, 0, self.len, start, &mut |_, _| true) {
                return Outcome::Matched;
            }
            if let Some(failure) = run.best {
                // The attempt that matched most of the input wins.
                if best.is_none_or(|(_, reached)| failure.pos - start > reached) {
                    best = Some((failure, failure.pos - start));
                }
            }
            if budget == 0 {
                break;
            }
        }
        Outcome::Failed {
            furthest: best.map(|(failure, _)| failure),
            exhausted: budget == 0,
        }
    }

    /// Writes into `out` a string the model accepts from `node` to the end
    /// of the pattern (leaving groups as their alternative would), and
    /// returns its length. `variant` picks among alternatives and class
    /// members.
    pub fn sample(&self, node: usize, variant: u32, out: &mut [u8]) -> usize {
        let mut writer = Writer { out, len: 0 };
        let mut at = node;
        let mut first = true;
        loop {
            let container = self.container(at);
            let end = self.alternative_end(at, container);
            self.write_range(at, end, variant, first, &mut writer);
            first = false;
            match container {
                Some(group) => at = self.group_end(group),
                None => break,
            }
        }
        writer.len
    }

    /// The innermost group whose nodes include position `at`.
    fn container(&self, at: usize) -> Option<usize> {
        (0..at.min(self.len))
            .rev()
            .find(|&g| matches!(self.nodes[g].kind, Kind::Group { end } if end as usize > at))
    }

    fn group_end(&self, group: usize) -> usize {
        match self.nodes[group].kind {
            Kind::Group { end } => end as usize,
            _ => self.len,
        }
    }

    /// The end of the alternative containing position `at` in `container`
    /// (the next Alt of that group, or the group's end).
    fn alternative_end(&self, at: usize, container: Option<usize>) -> usize {
        let (limit, parent) = match container {
            Some(group) => (self.group_end(group), group as u16),
            None => (self.len, NONE),
        };
        let mut i = at;
        while i < limit {
            match self.nodes[i].kind {
                Kind::Alt if self.nodes[i].parent == parent => return i,
                Kind::Group { end } => i = end as usize,
                _ => i += 1,
            }
        }
        limit
    }

    fn write_range(&self, from: usize, to: usize, variant: u32, first: bool, out: &mut Writer) {
        let mut i = from;
        let mut first = first;
        while i < to && !out.full() {
            let node = self.nodes[i];
            let jitter = variant.wrapping_add(i as u32);
            let count = repetitions(node, first, jitter);
            first = false;
            match node.kind {
                Kind::Group { end } => {
                    for rep in 0..count {
                        let choice = variant.wrapping_add(rep as u32).wrapping_add(jitter);
                        let (a, b) = self.nth_alternative(i, end as usize, choice);
                        self.write_range(
                            a,
                            b,
                            variant.wrapping_mul(31).wrapping_add(rep as u32),
                            false,
                            out,
                        );
                    }
                    i = end as usize;
                    continue;
                }
                Kind::Byte(byte) => (0..count).for_each(|_| out.push(byte)),
                Kind::Class(index) => {
                    let picks = &self.picks[index as usize];
                    let choices = self.pick_counts[index as usize] as u32;
                    for rep in 0..count {
                        let pick = variant.wrapping_mul(7).wrapping_add(rep as u32);
                        if choices > 0 {
                            out.push(picks[(pick % choices) as usize]);
                        }
                    }
                }
                Kind::LineStart | Kind::LineEnd => {
                    // Only after or before a newline when not at an edge:
                    // a sample within one line needs nothing.
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The node range of the `choice`th alternative (modulo their number)
    /// of the group at `group`.
    fn nth_alternative(&self, group: usize, end: usize, choice: u32) -> (usize, usize) {
        let count = 1
            + (group + 1..end)
                .filter(|&i| {
                    self.nodes[i].kind == Kind::Alt && self.nodes[i].parent as usize == group
                })
                .count();
        let wanted = (choice as usize) % count;
        let mut start = group + 1;
        let mut index = 0;
        let mut i = group + 1;
        while i < end {
            match self.nodes[i].kind {
                Kind::Alt if self.nodes[i].parent as usize == group => {
                    if index == wanted {
                        return (start, i);
                    }
                    index += 1;
                    start = i + 1;
                    i += 1;
                }
                Kind::Group { end: inner } => i = inner as usize,
                _ => i += 1,
            }
        }
        (start, end)
    }

    /// The literal runs of the pattern (consecutive single bytes, case as
    /// written) of at least `min_len` bytes, each passed to `f`.
    pub fn literals(&self, min_len: usize, mut f: impl FnMut(&[u8])) {
        let mut run = [0u8; 64];
        let mut len = 0;
        for node in &self.nodes[..self.len] {
            match node.kind {
                Kind::Byte(byte) if node.min == 1 && node.max == 1 && len < run.len() => {
                    run[len] = byte;
                    len += 1;
                    continue;
                }
                Kind::Byte(byte) if node.min >= 1 && len < run.len() => {
                    // `ab+` still starts with "ab": end the run after it.
                    run[len] = byte;
                    len += 1;
                }
                _ => {}
            }
            if len >= min_len {
                f(&run[..len]);
            }
            len = 0;
        }
        if len >= min_len {
            f(&run[..len]);
        }
    }

    /// Whether the source held more than the model.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

/// How many times to write a node into a sample (`variant` adds one
/// repetition now and then, where the node allows it).
fn repetitions(node: Node, first: bool, variant: u32) -> u16 {
    let floor = if first { node.min.max(1) } else { node.min };
    let ceiling = node
        .max
        .min(floor.saturating_add(SAMPLE_REPEAT_CAP))
        .max(floor);
    let extra = if ceiling > floor && variant % 3 == 1 {
        1
    } else {
        0
    };
    floor + extra
}

struct Writer<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn full(&self) -> bool {
        self.len >= self.out.len()
    }

    fn push(&mut self, byte: u8) {
        if !self.full() {
            self.out[self.len] = byte;
            self.len += 1;
        }
    }
}

/// One attempt to match from one start position.
struct Run<'a> {
    pattern: &'a Pattern,
    input: &'a [u8],
    /// Where the search began (`\A`, `\G`).
    origin: usize,
    budget: &'a mut u32,
    best: Option<Failure>,
}

impl Run<'_> {
    fn fail(&mut self, node: usize, pos: usize) -> bool {
        if self
            .best
            .is_none_or(|b| pos > b.pos || (pos == b.pos && node > b.node))
        {
            self.best = Some(Failure { node, pos });
        }
        false
    }

    /// Matches nodes `i..end` (one alternative's tail) at `pos`, then the
    /// continuation `then` with the position reached.
    fn sequence(
        &mut self,
        i: usize,
        end: usize,
        pos: usize,
        then: &mut dyn FnMut(&mut Self, usize) -> bool,
    ) -> bool
    where
        Self: Sized,
    {
        if *self.budget == 0 {
            return false;
        }
        *self.budget -= 1;
        let input = self.input;
        // Bytes and classes repeated a fixed number of times leave nothing
        // to give back: match them in a loop, not by recursion.
        let (mut i, mut pos) = (i, pos);
        while i < end {
            let node = self.pattern.nodes[i];
            if !matches!(node.kind, Kind::Byte(_) | Kind::Class(_)) || node.min != node.max {
                break;
            }
            let start = pos;
            for _ in 0..node.min {
                if pos >= input.len() || !self.pattern.accepts(&node, input[pos]) {
                    return self.fail(i, start);
                }
                pos += 1;
            }
            i += 1;
        }
        if i >= end {
            return then(self, pos);
        }
        let node = self.pattern.nodes[i];
        match node.kind {
            Kind::Byte(_) | Kind::Class(_) => {
                let mut count = 0usize;
                let mut p = pos;
                while count < node.max as usize
                    && p < input.len()
                    && self.pattern.accepts(&node, input[p])
                {
                    count += 1;
                    p += 1;
                }
                if count < node.min as usize {
                    return self.fail(i, pos);
                }
                // Greedy, giving back one repetition at a time.
                loop {
                    if self.sequence(i + 1, end, pos + count, then) {
                        return true;
                    }
                    if count == node.min as usize || *self.budget == 0 {
                        return false;
                    }
                    count -= 1;
                }
            }
            Kind::Group { end: group_end } => {
                self.group(i, group_end as usize, node, 0, pos, end, then)
            }
            // Alternatives are split before their sequences are matched.
            Kind::Alt => false,
            _ => {
                if self.assertion(node.kind, pos) {
                    self.sequence(i + 1, end, pos, then)
                } else {
                    self.fail(i, pos)
                }
            }
        }
    }

    /// Matches the group at `i` (repetition `done` so far) then the rest of
    /// its sequence up to `end`.
    #[allow(clippy::too_many_arguments)]
    fn group(
        &mut self,
        i: usize,
        group_end: usize,
        node: Node,
        done: u16,
        pos: usize,
        end: usize,
        then: &mut dyn FnMut(&mut Self, usize) -> bool,
    ) -> bool {
        if done < node.max {
            let mut after = |run: &mut Self, p: usize| {
                // A repetition that consumed nothing ends the loop.
                if p == pos && done >= node.min {
                    return false;
                }
                run.group(i, group_end, node, done.saturating_add(1), p, end, then)
            };
            if self.alternatives(i as u16, i + 1, group_end, pos, &mut after) {
                return true;
            }
        }
        if done >= node.min {
            return self.sequence(group_end, end, pos, then);
        }
        false
    }

    /// Matches one of the alternatives of `parent` in nodes `lo..hi`, then
    /// the continuation.
    fn alternatives(
        &mut self,
        parent: u16,
        lo: usize,
        hi: usize,
        pos: usize,
        then: &mut dyn FnMut(&mut Self, usize) -> bool,
    ) -> bool {
        let pattern = self.pattern;
        let mut start = lo;
        let mut j = lo;
        while j <= hi {
            if j == hi || (pattern.nodes[j].kind == Kind::Alt && pattern.nodes[j].parent == parent)
            {
                if self.sequence(start, j, pos, then) {
                    return true;
                }
                if *self.budget == 0 {
                    return false;
                }
                start = j + 1;
                j += 1;
                continue;
            }
            j = match pattern.nodes[j].kind {
                Kind::Group { end } => end as usize,
                _ => j + 1,
            };
        }
        false
    }

    fn assertion(&self, kind: Kind, pos: usize) -> bool {
        let input = self.input;
        match kind {
            Kind::Start => pos == self.origin,
            Kind::LineStart => pos == 0 || input[pos - 1] == b'\n',
            Kind::End => pos == input.len(),
            Kind::EndOrNewline => {
                pos == input.len() || (pos + 1 == input.len() && input[pos] == b'\n')
            }
            Kind::LineEnd => pos == input.len() || input[pos] == b'\n',
            _ => true,
        }
    }
}

impl Pattern {
    fn accepts(&self, node: &Node, byte: u8) -> bool {
        match node.kind {
            Kind::Byte(expected) => {
                expected == byte || (node.fold && expected.eq_ignore_ascii_case(&byte))
            }
            Kind::Class(index) => {
                let set = &self.classes[index as usize];
                set.contains(byte)
                    || (node.fold
                        && (set.contains(byte.to_ascii_lowercase())
                            || set.contains(byte.to_ascii_uppercase())))
            }
            _ => false,
        }
    }
}

/// The model cannot go on: the pattern is modelled up to here.
struct Stop;

struct Parser<'a> {
    source: &'a [u8],
    at: usize,
    pattern: &'a mut Pattern,
    extended: bool,
    multiline: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.source.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn push(&mut self, kind: Kind, fold: bool, parent: u16) -> Result<usize, Stop> {
        if self.pattern.len >= MAX_NODES {
            return Err(Stop);
        }
        let index = self.pattern.len;
        self.pattern.nodes[index] = Node {
            kind,
            min: 1,
            max: 1,
            fold,
            parent,
        };
        self.pattern.len += 1;
        Ok(index)
    }

    fn class(&mut self, set: ByteSet) -> Result<u8, Stop> {
        if let Some(found) = self.pattern.classes[..self.pattern.class_count]
            .iter()
            .position(|c| *c == set)
        {
            return Ok(found as u8);
        }
        if self.pattern.class_count >= MAX_CLASSES {
            return Err(Stop);
        }
        let index = self.pattern.class_count;
        self.pattern.classes[index] = set;
        // Members spread over the class (printable ones first), chosen
        // here once so that sampling is a table lookup.
        let size = set.nth_count();
        let count = size.min(PICKS as u32);
        for pick in 0..count {
            let member = set.nth(pick * size / count.max(1)).unwrap_or(b'a');
            self.pattern.picks[index][pick as usize] = member;
        }
        self.pattern.pick_counts[index] = count as u8;
        self.pattern.class_count += 1;
        Ok((self.pattern.class_count - 1) as u8)
    }

    /// Alternatives up to `)` or the end, as children of `parent`.
    fn alternatives(&mut self, fold: bool, parent: u16, depth: usize) -> Result<(), Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop);
        }
        let mut fold = fold;
        loop {
            self.skip_extended_space();
            match self.peek() {
                None => return Ok(()),
                Some(b')') => return Ok(()),
                Some(b'|') => {
                    self.at += 1;
                    self.push(Kind::Alt, fold, parent)?;
                }
                Some(_) => {
                    let before = self.pattern.len;
                    if let Some(new_fold) = self.atom(fold, parent, depth)? {
                        fold = new_fold;
                        continue;
                    }
                    if self.pattern.len > before {
                        self.quantifier(before)?;
                    }
                }
            }
        }
    }

    /// A repetition after the atom that starts at node `atom`, if any.
    fn quantifier(&mut self, atom: usize) -> Result<(), Stop> {
        self.skip_extended_space();
        let braced = self.peek() == Some(b'{');
        let start = self.at;
        let (mut min, max) = match self.peek() {
            Some(b'*') => (0, UNBOUNDED),
            Some(b'+') => (1, UNBOUNDED),
            Some(b'?') => (0, 1),
            Some(b'{') => match self.braces() {
                Some(range) => range,
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        if !braced {
            self.at += 1;
        }
        // Lazy and possessive forms repeat the same way for the model, but
        // Ruby reads `{n}?` as an optional `{n}`.
        if matches!(self.peek(), Some(b'?' | b'+')) {
            if braced && self.peek() == Some(b'?') && !self.source[start..self.at].contains(&b',') {
                min = 0;
            }
            self.at += 1;
        }
        self.skip_extended_space();
        // A quantifier on the repetition (`(ab){1,3}{0}`, `a**`): the model
        // ends here, with the atom as any number of repetitions.
        let stacked = self.quantifier_follows();
        let (min, max) = if stacked { (0, UNBOUNDED) } else { (min, max) };
        let node = &mut self.pattern.nodes[atom];
        let any_text = node.min == 0 && node.max == UNBOUNDED;
        if any_text {
            // A backreference stays any text.
        } else if matches!(
            node.kind,
            Kind::Byte(_) | Kind::Class(_) | Kind::Group { .. }
        ) {
            node.min = min;
            node.max = max;
        } else if min == 0 {
            // A zero-width assertion repeated at least once is itself;
            // one that may be repeated zero times (`$*`) asserts nothing.
            node.kind = Kind::Empty;
        }
        if stacked {
            return Err(Stop);
        }
        Ok(())
    }

    /// Whether a quantifier starts here (nothing is consumed).
    fn quantifier_follows(&mut self) -> bool {
        match self.peek() {
            Some(b'*' | b'+' | b'?') => true,
            Some(b'{') => {
                let at = self.at;
                let braced = self.braces().is_some();
                self.at = at;
                braced
            }
            _ => false,
        }
    }

    /// `{n}`, `{n,}`, `{,m}`, `{n,m}` (consumed), or None (a literal `{`,
    /// not consumed).
    fn braces(&mut self) -> Option<(u16, u16)> {
        let rest = &self.source[self.at + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        let inside = &rest[..close];
        // Onigmo repeats up to 100,000 times; past what a u16 holds, the
        // model repeats without bound (coarser).
        let number = |digits: &[u8]| -> Option<u16> {
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) || digits.len() > 6 {
                return None;
            }
            let n: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
            (n <= 100_000).then(|| n.min(u32::from(UNBOUNDED)) as u16)
        };
        let range = match inside.iter().position(|&b| b == b',') {
            None => {
                let n = number(inside)?;
                (n, n)
            }
            Some(comma) => {
                let (low, high) = (&inside[..comma], &inside[comma + 1..]);
                if low.is_empty() && high.is_empty() {
                    return None;
                }
                let min = if low.is_empty() { 0 } else { number(low)? };
                let max = if high.is_empty() {
                    UNBOUNDED
                } else {
                    number(high)?
                };
                if max < min {
                    return None;
                }
                (min, max)
            }
        };
        self.at += close + 2;
        Some(range)
    }

    fn skip_extended_space(&mut self) {
        while self.extended {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c') => self.at += 1,
                Some(b'#') => while self.next().is_some_and(|b| b != b'\n') {},
                _ => return,
            }
        }
    }

    /// One atom at the current position. Returns Some(fold) when it was an
    /// inline option change (`(?i)`) that applies to the rest.
    fn atom(&mut self, fold: bool, parent: u16, depth: usize) -> Result<Option<bool>, Stop> {
        let byte = self.next().ok_or(Stop)?;
        match byte {
            b'(' => return self.group(fold, parent, depth),
            b'[' => {
                let set = self.bracket(depth)?;
                let index = self.class(set)?;
                self.push(Kind::Class(index), fold, parent)?;
            }
            b'.' => {
                let mut set = ByteSet::default();
                set.negate();
                if !self.multiline {
                    set.0[0] &= !(1 << b'\n');
                }
                let index = self.class(set)?;
                self.push(Kind::Class(index), false, parent)?;
            }
            b'^' => {
                self.push(Kind::LineStart, fold, parent)?;
            }
            b'$' => {
                self.push(Kind::LineEnd, fold, parent)?;
            }
            b'\\' => self.escape(fold, parent)?,
            b'*' | b'+' | b'?' => return Err(Stop),
            _ if byte >= 0x80 => self.multibyte(fold, parent)?,
            _ => {
                self.push(Kind::Byte(byte), fold, parent)?;
            }
        }
        Ok(None)
    }

    /// A UTF-8 character of more than one byte, its lead byte just read: a
    /// group, so that a repetition applies to all its bytes.
    fn multibyte(&mut self, fold: bool, parent: u16) -> Result<(), Stop> {
        let source = self.source;
        let start = self.at - 1;
        self.at += source[self.at..]
            .iter()
            .take_while(|&&b| b & 0xc0 == 0x80)
            .count();
        let bytes = source[start..self.at].iter().map(|&b| Kind::Byte(b));
        self.group_of(bytes, fold, parent)
    }

    /// A group holding `kinds` (alternatives separated by [`Kind::Alt`]),
    /// so that a repetition applies to all of it.
    fn group_of(
        &mut self,
        kinds: impl IntoIterator<Item = Kind>,
        fold: bool,
        parent: u16,
    ) -> Result<(), Stop> {
        let group = self.push(Kind::Group { end: 0 }, fold, parent)?;
        let filled = kinds
            .into_iter()
            .try_for_each(|kind| self.push(kind, false, group as u16).map(drop));
        // Closed even when the node limit cut it short: an open group
        // (end 0) would send the matcher back to its start forever.
        self.pattern.nodes[group].kind = Kind::Group {
            end: self.pattern.len as u16,
        };
        filled
    }

    fn group(&mut self, fold: bool, parent: u16, depth: usize) -> Result<Option<bool>, Stop> {
        let mut fold_inside = fold;
        // The options around the group, before `(?x:` or `(?m-x:` changes
        // them for its inside only (`(?x)` changes them for the rest of the
        // enclosing group, which restores its own when it ends).
        let (outer_extended, outer_multiline) = (self.extended, self.multiline);
        if self.peek() == Some(b'?') {
            self.at += 1;
            match self.next().ok_or(Stop)? {
                b':' | b'>' => {}
                b'#' => {
                    while self.next().ok_or(Stop)? != b')' {}
                    return Ok(Some(fold));
                }
                b'=' | b'!' => return self.zero_width(parent),
                b'<' if matches!(self.peek(), Some(b'=' | b'!')) => {
                    self.at += 1;
                    return self.zero_width(parent);
                }
                b'<' | b'\'' => {
                    let close = if self.source[self.at - 1] == b'<' {
                        b'>'
                    } else {
                        b'\''
                    };
                    while self.next().ok_or(Stop)? != close {}
                }
                b'i' | b'm' | b'x' | b'-' => {
                    self.at -= 1;
                    let mut on = true;
                    let mut new_fold = fold;
                    loop {
                        match self.next().ok_or(Stop)? {
                            b'-' => on = false,
                            b'i' => new_fold = on,
                            b'm' => self.multiline = on,
                            b'x' => self.extended = on,
                            b')' => return Ok(Some(new_fold)),
                            b':' => break,
                            _ => return Err(Stop),
                        }
                    }
                    fold_inside = new_fold;
                }
                _ => return Err(Stop),
            }
        }
        let group = self.push(Kind::Group { end: 0 }, fold, parent)?;
        let result = self.alternatives(fold_inside, group as u16, depth + 1);
        self.pattern.nodes[group].kind = Kind::Group {
            end: self.pattern.len as u16,
        };
        result?;
        if self.next() != Some(b')') {
            return Err(Stop);
        }
        self.extended = outer_extended;
        self.multiline = outer_multiline;
        Ok(None)
    }

    /// A lookaround: skipped, and modelled as always true.
    fn zero_width(&mut self, parent: u16) -> Result<Option<bool>, Stop> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.next().ok_or(Stop)? {
                b'\\' => {
                    self.next().ok_or(Stop)?;
                }
                b'[' => {
                    self.bracket(0)?;
                }
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
        }
        self.push(Kind::Empty, false, parent)?;
        Ok(None)
    }

    fn escape(&mut self, fold: bool, parent: u16) -> Result<(), Stop> {
        let byte = self.next().ok_or(Stop)?;
        let kind = match byte {
            b'A' | b'G' => Kind::Start,
            b'z' => Kind::End,
            b'Z' => Kind::EndOrNewline,
            b'b' | b'B' | b'K' => Kind::Empty,
            // A backreference (or, with more digits than groups, an octal
            // escape): any text.
            b'1'..=b'9' => {
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.at += 1;
                }
                return self.any_text(parent);
            }
            b'k' | b'g' => {
                let close = match self.next() {
                    Some(b'<') => b'>',
                    Some(b'\'') => b'\'',
                    _ => return Err(Stop),
                };
                while self.next().ok_or(Stop)? != close {}
                if byte == b'g' {
                    // A subexpression call: not modelled.
                    return Err(Stop);
                }
                return self.any_text(parent);
            }
            b'X' | b'R' => {
                // A line break or a grapheme cluster: "\r\n" as one, or one
                // byte of the class.
                self.at -= 1;
                let class = self.escape_set().and_then(|set| self.class(set))?;
                let kinds = [
                    Kind::Byte(b'\r'),
                    Kind::Byte(b'\n'),
                    Kind::Alt,
                    Kind::Class(class),
                ];
                return self.group_of(kinds, false, parent);
            }
            b'p' | b'P' | b'd' | b'D' | b'w' | b'W' | b's' | b'S' | b'h' | b'H' => {
                self.at -= 1;
                let set = self.escape_set()?;
                Kind::Class(self.class(set)?)
            }
            // An escaped non-ASCII character is itself.
            _ if byte >= 0x80 => return self.multibyte(fold, parent),
            _ => {
                self.at -= 1;
                let value = self.escape_value()?;
                if value >= 0x80 {
                    return self.code_point(value, fold, parent);
                }
                Kind::Byte(value as u8)
            }
        };
        let fold = fold && matches!(kind, Kind::Byte(_) | Kind::Class(_));
        self.push(kind, fold, parent)?;
        Ok(())
    }

    /// Any text, of any length (what a backreference may match). Its
    /// repetition range stays 0 to unbounded whatever quantifier follows.
    fn any_text(&mut self, parent: u16) -> Result<(), Stop> {
        let mut all = ByteSet::default();
        all.negate();
        let class = self.class(all)?;
        let index = self.push(Kind::Class(class), false, parent)?;
        self.pattern.nodes[index].min = 0;
        self.pattern.nodes[index].max = UNBOUNDED;
        Ok(())
    }

    /// A code point above ASCII written as an escape: its UTF-8 bytes.
    fn code_point(&mut self, value: u32, fold: bool, parent: u16) -> Result<(), Stop> {
        if value <= 0xff && self.source_is_binary_escape() {
            self.push(Kind::Byte(value as u8), fold, parent)?;
            return Ok(());
        }
        let character = char::from_u32(value).ok_or(Stop)?;
        let mut buffer = [0u8; 4];
        let bytes = character.encode_utf8(&mut buffer).as_bytes();
        self.group_of(bytes.iter().map(|&b| Kind::Byte(b)), fold, parent)
    }

    /// Whether the escape just read was `\xHH` or octal (a byte), not `\u`.
    fn source_is_binary_escape(&self) -> bool {
        let mut i = self.at;
        while i > 0 && self.source[i - 1] != b'\\' {
            i -= 1;
        }
        self.source.get(i) != Some(&b'u')
    }

    /// The value of a character escape (after the backslash).
    fn escape_value(&mut self) -> Result<u32, Stop> {
        let byte = self.next().ok_or(Stop)?;
        Ok(match byte {
            b'n' => 10,
            b't' => 9,
            b'r' => 13,
            b'f' => 12,
            b'v' => 11,
            b'a' => 7,
            b'e' => 27,
            b'0'..=b'7' => {
                let mut value = (byte - b'0') as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            self.at += 1;
                            value = value * 8 + (d - b'0') as u32;
                        }
                        _ => break,
                    }
                }
                value & 0xff
            }
            b'x' => self.hex_digits(2)?,
            b'u' => {
                if self.peek() == Some(b'{') {
                    self.at += 1;
                    let value = self.hex_digits(6)?;
                    if self.next() != Some(b'}') {
                        return Err(Stop);
                    }
                    value
                } else {
                    self.hex_digits(4)?
                }
            }
            b'c' | b'C' | b'M' => return Err(Stop),
            _ => byte as u32,
        })
    }

    fn hex_digits(&mut self, most: usize) -> Result<u32, Stop> {
        let mut value = 0u32;
        let mut digits = 0;
        while digits < most {
            let Some(digit) = self.peek().and_then(|b| (b as char).to_digit(16)) else {
                break;
            };
            self.at += 1;
            value = value * 16 + digit;
            digits += 1;
        }
        if digits == 0 {
            return Err(Stop);
        }
        Ok(value)
    }

    /// `\d`, `\w`, `\s`, `\h`, their negations, `\p{...}`, `\R`, `\X`.
    fn escape_set(&mut self) -> Result<ByteSet, Stop> {
        let byte = self.next().ok_or(Stop)?;
        let mut set = ByteSet::default();
        match byte.to_ascii_lowercase() {
            b'd' => set.insert_range(b'0', b'9'),
            b'w' => {
                set.insert_range(b'a', b'z');
                set.insert_range(b'A', b'Z');
                set.insert_range(b'0', b'9');
                set.insert(b'_');
            }
            b's' => b" \t\n\r\x0b\x0c".iter().for_each(|&b| set.insert(b)),
            b'h' => {
                set.insert_range(b'0', b'9');
                set.insert_range(b'a', b'f');
                set.insert_range(b'A', b'F');
            }
            b'r' => set.insert_range(b'\n', b'\r'),
            b'x' => set.negate(),
            b'p' => {
                if self.next() != Some(b'{') {
                    return Err(Stop);
                }
                let negated = self.peek() == Some(b'^');
                if negated {
                    self.at += 1;
                }
                let start = self.at;
                while self.next().ok_or(Stop)? != b'}' {}
                set = property(&self.source[start..self.at - 1]).ok_or(Stop)?;
                if negated != (byte == b'P') {
                    set.negate();
                }
                return Ok(set);
            }
            _ => return Err(Stop),
        }
        if byte.is_ascii_uppercase() && !matches!(byte, b'R' | b'X') {
            set.negate();
        }
        Ok(set)
    }

    /// A bracket class after its `[`, through its `]`.
    fn bracket(&mut self, depth: usize) -> Result<ByteSet, Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop);
        }
        let mut set = ByteSet::default();
        let negated = self.peek() == Some(b'^');
        if negated {
            self.at += 1;
        }
        let mut first = true;
        let mut intersected = false;
        loop {
            let byte = self.next().ok_or(Stop)?;
            let low = match byte {
                b']' if !first => break,
                b'[' if self.peek() == Some(b':') => {
                    self.at += 1;
                    let negate = self.peek() == Some(b'^');
                    if negate {
                        self.at += 1;
                    }
                    let start = self.at;
                    while self.next().ok_or(Stop)? != b':' {}
                    let mut posix = property(&self.source[start..self.at - 1]).ok_or(Stop)?;
                    if self.next() != Some(b']') {
                        return Err(Stop);
                    }
                    if negate {
                        posix.negate();
                    }
                    if !intersected {
                        set.union(&posix);
                    }
                    first = false;
                    continue;
                }
                b'[' => {
                    let inner = self.bracket(depth + 1)?;
                    if !intersected {
                        set.union(&inner);
                    }
                    first = false;
                    continue;
                }
                b'&' if self.peek() == Some(b'&') => {
                    // Intersection: modelled by its first operand.
                    self.at += 1;
                    intersected = true;
                    continue;
                }
                b'\\' => match self.peek() {
                    Some(b'd' | b'D' | b'w' | b'W' | b's' | b'S' | b'h' | b'H' | b'p' | b'P') => {
                        let inner = self.escape_set()?;
                        if !intersected {
                            set.union(&inner);
                        }
                        first = false;
                        continue;
                    }
                    _ => self.escape_value()?,
                },
                _ => byte as u32,
            };
            first = false;
            let mut high = low;
            // `-` before `]` or a nested class (`[a-[u]]`) is a member.
            if self.peek() == Some(b'-')
                && self
                    .source
                    .get(self.at + 1)
                    .is_some_and(|&b| b != b']' && b != b'[')
            {
                self.at += 1;
                high = match self.next().ok_or(Stop)? {
                    b'\\' => self.escape_value()?,
                    other => other as u32,
                };
            }
            if !intersected && low <= 0x7f {
                set.insert_range(low as u8, high.min(0x7f) as u8);
            } else if !intersected && low <= 0xff && high <= 0xff && low >= 0x80 {
                // Non-ASCII members are not modelled (their UTF-8 form
                // would be several bytes); a non-ASCII lead byte is skipped.
            }
            // Skip the continuation bytes of a UTF-8 member.
            while self.peek().is_some_and(|b| b & 0xc0 == 0x80) {
                self.at += 1;
            }
        }
        if negated {
            set.negate();
        }
        Ok(set)
    }
}

/// The ASCII members of a POSIX bracket or Unicode property name.
fn property(name: &[u8]) -> Option<ByteSet> {
    let mut set = ByteSet::default();
    let lower = |name: &[u8], expected: &[u8]| name.eq_ignore_ascii_case(expected);
    if lower(name, b"alpha") || lower(name, b"l") || lower(name, b"letter") {
        set.insert_range(b'a', b'z');
        set.insert_range(b'A', b'Z');
    } else if lower(name, b"digit") || lower(name, b"nd") || lower(name, b"n") {
        set.insert_range(b'0', b'9');
    } else if lower(name, b"alnum") {
        set.insert_range(b'a', b'z');
        set.insert_range(b'A', b'Z');
        set.insert_range(b'0', b'9');
    } else if lower(name, b"word") {
        set.insert_range(b'a', b'z');
        set.insert_range(b'A', b'Z');
        set.insert_range(b'0', b'9');
        set.insert(b'_');
    } else if lower(name, b"upper") || lower(name, b"lu") {
        set.insert_range(b'A', b'Z');
    } else if lower(name, b"lower") || lower(name, b"ll") {
        set.insert_range(b'a', b'z');
    } else if lower(name, b"space") {
        b" \t\n\r\x0b\x0c".iter().for_each(|&b| set.insert(b));
    } else if lower(name, b"blank") {
        set.insert(b' ');
        set.insert(b'\t');
    } else if lower(name, b"xdigit") {
        set.insert_range(b'0', b'9');
        set.insert_range(b'a', b'f');
        set.insert_range(b'A', b'F');
    } else if lower(name, b"punct") || lower(name, b"p") {
        for byte in 0x21u8..0x7f {
            if !byte.is_ascii_alphanumeric() {
                set.insert(byte);
            }
        }
    } else if lower(name, b"print")
        || lower(name, b"graph")
        || lower(name, b"ascii")
        || lower(name, b"any")
    {
        set.insert_range(if lower(name, b"graph") { 0x21 } else { 0x20 }, 0x7e);
        if lower(name, b"ascii") || lower(name, b"any") {
            set.insert_range(0, 0x7f);
        }
    } else if lower(name, b"cntrl") || lower(name, b"cc") {
        set.insert_range(0, 0x1f);
        set.insert(0x7f);
    } else {
        // Scripts and other properties: letters stand for them.
        set.insert_range(b'a', b'z');
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pattern: &Pattern, node: usize, variant: u32) -> Vec<u8> {
        let mut out = [0u8; 64];
        let len = pattern.sample(node, variant, &mut out);
        out[..len].to_vec()
    }

    fn fails_at(source: &str, input: &str) -> Option<(usize, String)> {
        let pattern = Pattern::parse(source.as_bytes(), 0);
        pattern.progress(input.as_bytes(), 0, false).map(|failure| {
            let tail = sample(&pattern, failure.node, 0);
            (failure.pos, String::from_utf8(tail).unwrap())
        })
    }

    /// Inputs Ruby's Regexp matches, found by the differential fuzz target
    /// (test/fuzz_targets/regexp_model.rb) where the model did not.
    #[test]
    fn the_model_matches_whatever_ruby_matches() {
        let cases: &[(&[u8], u32, &[u8])] = &[
            (br"$*?aa", 0, b"aa"),
            (
                br"(ab){1,3} {0}(?i:\D)(?!a)${,2}(?i:\S)+?",
                EXTENDED,
                b"\0\xff",
            ),
            (br"\R", 0, b"\0\x0c"),
            (br"\A\R\z", 0, b"\r\n"),
            (br"\A\X\X\z", 0, b"a\r\n"),
            (br"(?:\A)?\D", 0, b"5Y"),
            (br"[a-[u]]?", 0, b""),
            (br"\A[a-[u]]\z", 0, b"u"),
            ("\u{fffd}{50}?".as_bytes(), 0, b""),
            ("\\\u{e9}??a".as_bytes(), 0, "\u{e9}a".as_bytes()),
            (br"\x01?{14444}\*?", 0, b""),
            (br"A{,2}(^)\101aa", 0, b"Aaa"),
            (br"\A(a)\1b\z", 0, b"aab"),
            (br"\A(?<n>a|)\k<n>+b\z", 0, b"b"),
        ];
        for &(source, options, input) in cases {
            let pattern = Pattern::parse(source, options);
            assert_eq!(
                pattern.matches(input),
                Some(true),
                "{:?} =~ {:?}",
                String::from_utf8_lossy(source),
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn a_literal_pattern_samples_itself() {
        let pattern = Pattern::parse(br"\Akey=SECRET", 0);
        assert!(pattern.anchored());
        assert_eq!(sample(&pattern, 0, 0), b"key=SECRET");
    }

    #[test]
    fn the_failure_is_where_the_input_stops_matching() {
        assert_eq!(
            fails_at(r"\Akey=SECRET[0-9]{2};\z", "key=SEC"),
            Some((7, "RET01;".into()))
        );
        assert_eq!(
            fails_at(r"\Akey=SECRET[0-9]{2};\z", "key=SECRET7x"),
            Some((10, "01;".into()))
        );
        assert_eq!(fails_at(r"\Akey=SECRET[0-9]{2};\z", "key=SECRET12;"), None);
        assert_eq!(fails_at(r"\Akey", "xkey"), Some((0, "key".into())));
    }

    #[test]
    fn unanchored_patterns_fail_where_they_got_furthest() {
        assert_eq!(fails_at("needle", "xxneexx"), Some((5, "dle".into())));
    }

    #[test]
    fn greedy_repetitions_give_back() {
        assert_eq!(fails_at(r"\A\w+_end\z", "abc_end"), None);
        assert_eq!(fails_at(r"\A.*foo", "abcfo"), Some((5, "o".into())));
    }

    #[test]
    fn alternatives_and_groups() {
        let pattern = Pattern::parse(br"\A(GET|POST|PUT) /", 0);
        let samples: Vec<Vec<u8>> = (0..3).map(|v| sample(&pattern, 0, v)).collect();
        assert!(samples.contains(&b"GET /".to_vec()));
        assert!(samples.contains(&b"POST /".to_vec()));
        assert_eq!(fails_at(r"\A(GET|POST) /", "POST x"), Some((5, "/".into())));
        assert_eq!(fails_at(r"\A(?:ab)+c", "ababx"), Some((4, "c".into())));
        assert_eq!(
            fails_at(r"\A(?<year>\d{4})-(?<month>\d\d)", "2024-1"),
            Some((6, "0".into()))
        );
    }

    #[test]
    fn a_failure_inside_a_group_samples_the_rest_of_the_pattern() {
        let pattern = Pattern::parse(br"\A(ab(cd)ef)gh", 0);
        let failure = pattern.progress(b"abc", 0, false).unwrap();
        assert_eq!(failure.pos, 3);
        assert_eq!(sample(&pattern, failure.node, 0), b"defgh");
    }

    #[test]
    fn classes_escapes_and_options() {
        let pattern = Pattern::parse(br"[^a-z]\x41\u00e9\t[[:digit:]]", 0);
        assert_eq!(sample(&pattern, 0, 0), b" A\xc3\xa9\t0");
        let folded = Pattern::parse(b"select", IGNORECASE);
        assert_eq!(folded.progress(b"SELECT", 0, true), None);
        let extended = Pattern::parse(b"a b # comment\n c", EXTENDED);
        assert_eq!(sample(&extended, 0, 0), b"abc");
        assert_eq!(fails_at(r"(?i:abc)d", "ABCD").map(|f| f.0), Some(3));
        // A scoped option ends with its group; `(?x)` lasts to the end of
        // the enclosing one.
        assert_eq!(Pattern::parse(br"(?x:b ) a", 0).matches(b"b a"), Some(true));
        assert_eq!(
            Pattern::parse(br"\s*(?x:^ )(?> )a", 0).matches(b" a"),
            Some(true)
        );
        assert_eq!(
            Pattern::parse(br"((?x) b ) a", 0).matches(b"b a"),
            Some(true)
        );
        assert_eq!(
            Pattern::parse(br"((?x) b ) a", 0).matches(b" b  a"),
            Some(false)
        );
        assert_eq!(fails_at(r"(?=x)abc", "abc"), None);
    }

    #[test]
    fn a_character_cut_by_the_node_limit_leaves_its_group_closed() {
        // "R", 91 NULs, "\n", "," and "³" (two bytes in a group of its own):
        // the limit falls inside that group.
        let mut source = vec![b'R'];
        source.extend([0u8; 91]);
        source.extend_from_slice("\\n,³".as_bytes());
        let pattern = Pattern::parse(&source, IGNORECASE);
        assert!(pattern.truncated());
        assert_eq!(
            pattern.matches(b"Ruby is a dynamic, open source language"),
            Some(false)
        );
    }

    #[test]
    fn what_is_not_modelled_truncates() {
        let pattern = Pattern::parse(br"ab(?~cd)ef", 0);
        assert!(pattern.truncated());
        assert_eq!(sample(&pattern, 0, 0), b"ab");
        let long = "x".repeat(MAX_NODES + 10);
        let pattern = Pattern::parse(long.as_bytes(), 0);
        assert!(pattern.truncated());
        assert_eq!(sample(&pattern, 0, 0).len(), 64);
    }

    #[test]
    fn class_members_prefer_printable_bytes() {
        let mut set = ByteSet::default();
        set.insert(b'\n');
        set.insert_range(b'a', b'c');
        assert_eq!(
            (0..4).map(|n| set.nth(n)).collect::<Vec<_>>(),
            [Some(b'a'), Some(b'b'), Some(b'c'), Some(b'a')]
        );
        let mut control = ByteSet::default();
        control.insert(0x01);
        control.insert(0xff);
        assert_eq!(
            (0..2).map(|n| control.nth(n)).collect::<Vec<_>>(),
            [Some(0x01), Some(0xff)]
        );
        assert_eq!(ByteSet::default().nth(3), None);
    }

    #[test]
    fn literal_runs() {
        let pattern = Pattern::parse(br"\A<\?xml version=(\d)\.(\d)|DOCTYPE", 0);
        let mut runs = Vec::new();
        pattern.literals(3, |run| runs.push(String::from_utf8(run.to_vec()).unwrap()));
        assert_eq!(runs, ["<?xml version=", "DOCTYPE"]);
    }

    #[test]
    fn malformed_sources_do_not_panic() {
        for source in [
            "(", ")", "[", "[a-", "\\", "a{2", "(?", "(?<", "\\u{zz}", "\\p{", "[[:alpha", "*a",
            "a**",
        ] {
            let pattern = Pattern::parse(source.as_bytes(), 0);
            let _ = pattern.progress(b"abc", 0, false);
            let mut out = [0u8; 8];
            let _ = pattern.sample(0, 3, &mut out);
        }
    }
}

//! The kinds of finding saved as artifact files (a crash, a timeout, an
//! out-of-memory...): one enum for the native code, so that a kind is a
//! type, never a loose `b"timeout-"` or `"deadly signal"`.
//!
//! Their facts (the artifact prefix, the `ERROR: <reporter>: <headline>`
//! words, the exit status) are defined once, in Ruby
//! (`Ruzzy::Findings::KINDS`, `lib/ruzzy/finding_kinds.rb`), because the
//! campaign supervisor and `ruzzy findings` need them without this
//! extension loaded. [`resolve`] copies them when the extension loads; a
//! kind missing there, or one there that this enum does not know, makes
//! `require "ruzzy"` fail with a message saying which.
//!
//! Invariants: resolved once, at `require`, before any finding can be
//! reported; after that the accessors read memory that never changes and is
//! never freed (one atomic load, plain reads): async-signal-safe, no
//! allocation, no lock. Uses nothing of the crate: findings and the engine
//! alike may use it.
//!
//! May use: nothing.

use magnus::{prelude::*, Error, RArray, RHash, RModule, Ruby, Value};
use std::sync::OnceLock;

/// A kind of finding, by its key in `Ruzzy::Findings::KINDS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// A deadly signal (and whatever else libFuzzer saves as `crash-`).
    Crash,
    /// An input that ran past `-timeout`.
    Timeout,
    /// The process went over `-rss_limit_mb`.
    OutOfMemory,
    /// LeakSanitizer found memory leaked by an input.
    Leak,
    /// An input far slower than the rest (fuzzing goes on).
    SlowUnit,
}

impl FindingKind {
    /// Every kind, in the order of [`FACTS`].
    pub const ALL: [FindingKind; 5] = [
        FindingKind::Crash,
        FindingKind::Timeout,
        FindingKind::OutOfMemory,
        FindingKind::Leak,
        FindingKind::SlowUnit,
    ];

    /// Its key (a Symbol) in `Ruzzy::Findings::KINDS`.
    pub const fn name(self) -> &'static str {
        match self {
            FindingKind::Crash => "crash",
            FindingKind::Timeout => "timeout",
            FindingKind::OutOfMemory => "oom",
            FindingKind::Leak => "leak",
            FindingKind::SlowUnit => "slow_unit",
        }
    }

    /// What its artifact's name starts with (`timeout-`).
    pub fn prefix(self) -> &'static [u8] {
        self.facts().prefix
    }

    /// Who reports it (`libFuzzer`): `ERROR: <reporter>: <headline>`.
    pub fn reporter(self) -> &'static str {
        self.facts().reporter
    }

    /// The words of its report (`deadly signal`), which libFuzzer's
    /// `SUMMARY:` line repeats; empty for a kind that has no report.
    pub fn headline(self) -> &'static str {
        self.facts().headline
    }

    /// The exit status of a run it ends; None when the run goes on.
    pub fn exit_status(self) -> Option<i32> {
        self.facts().exit_status
    }

    fn facts(self) -> &'static Facts {
        // Before [`resolve`] (only a Rust unit test gets here) every fact is
        // empty.
        FACTS
            .get()
            .map_or(&UNRESOLVED, |facts| &facts[self as usize])
    }
}

/// One kind's facts, as `Ruzzy::Findings::KINDS` gives them.
struct Facts {
    prefix: &'static [u8],
    reporter: &'static str,
    headline: &'static str,
    exit_status: Option<i32>,
}

/// The facts of [`FindingKind::ALL`], in its order; set once by [`resolve`].
static FACTS: OnceLock<[Facts; FindingKind::ALL.len()]> = OnceLock::new();
static UNRESOLVED: Facts = Facts {
    prefix: b"",
    reporter: "",
    headline: "",
    exit_status: None,
};

/// Copies each kind's facts from `Ruzzy::Findings::KINDS` (called once, at
/// `require`); a LoadError naming the kind when the table and the enum do
/// not hold the same kinds.
pub fn resolve(ruby: &Ruby, ruzzy: RModule) -> Result<(), Error> {
    let mismatch = |what: String| {
        Error::new(
            ruby.exception_load_error(),
            format!(
                "ruzzy's native extension does not match its Ruby files: {what} \
                 (lib/ruzzy/finding_kinds.rb); reinstall ruzzy"
            ),
        )
    };
    let table: RHash = ruzzy
        .const_get::<_, RModule>("Findings")?
        .const_get("KINDS")?;
    for key in table.funcall::<_, _, RArray>("keys", ())? {
        let name: String = key.funcall("to_s", ())?;
        if !FindingKind::ALL.iter().any(|kind| kind.name() == name) {
            return Err(mismatch(format!(
                "Ruzzy::Findings::KINDS has the kind {}, which the extension does not know",
                key.inspect()
            )));
        }
    }
    let mut facts = Vec::with_capacity(FindingKind::ALL.len());
    for kind in FindingKind::ALL {
        let Some(entry) = table.get(ruby.to_symbol(kind.name())) else {
            return Err(mismatch(format!(
                "Ruzzy::Findings::KINDS has no kind :{}",
                kind.name()
            )));
        };
        let text = |member: &str| -> Result<&'static str, Error> {
            let value: Option<String> = entry.funcall(member, ())?;
            Ok(Box::leak(value.unwrap_or_default().into_boxed_str()))
        };
        facts.push(Facts {
            prefix: text("prefix")?.as_bytes(),
            reporter: text("reporter")?,
            headline: text("headline")?,
            exit_status: entry.funcall::<_, _, Option<i32>>("exit_status", ())?,
        });
    }
    let Ok(facts) = <[Facts; FindingKind::ALL.len()]>::try_from(facts) else {
        return Err(mismatch("a kind is missing".to_owned()));
    };
    let _ = FACTS.set(facts);
    Ok(())
}

/// The kinds this extension knows (`Ruzzy::Native::FINDING_KINDS`), as
/// Symbols.
pub fn names(ruby: &Ruby) -> Value {
    let names = ruby.ary_from_iter(
        FindingKind::ALL
            .iter()
            .map(|kind| ruby.to_symbol(kind.name())),
    );
    names.freeze();
    names.as_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_own_name_and_slot() {
        for (index, kind) in FindingKind::ALL.iter().enumerate() {
            assert_eq!(*kind as usize, index, "{kind:?} is where FACTS keeps it");
            let same = FindingKind::ALL
                .iter()
                .filter(|other| other.name() == kind.name());
            assert_eq!(same.count(), 1, "{kind:?}'s name is its own");
        }
    }
}

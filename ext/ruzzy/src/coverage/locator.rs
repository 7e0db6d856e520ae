//! The one way from a Ruby frame to a location: the per-iseq part of its id
//! (the path's hash mixed with where the iseq starts), the path's registry
//! entry, and whether the code is instrumented, remembered per iseq.
//!
//! There is one locator per process. Coverage creates it with its include
//! and exclude rules when it starts ([`init`]); without coverage, the
//! comparison hooks create one that includes all code when they are
//! installed ([`get_or_include_all`]). The coverage hook locates events
//! with it and the comparison hooks locate their callers with it, so both
//! agree on ids and on which code counts: a comparison made by code that
//! is not instrumented (ruzzy itself, RubyGems, excluded paths) reports
//! nothing and touches no counter.
//!
//! Invariants: no allocation and no lock after creation (see `iseq_cache`
//! and `path_registry`); used with the GVL held.

use crate::coverage::iseq_cache::{IseqCache, IseqInfo};
use crate::coverage::location::{self, Site};
use crate::coverage::path_registry::{hash_bytes, PathRegistry};
use crate::coverage::quiet;
use crate::rb::value::Frame;
use std::sync::OnceLock;

pub struct Locator {
    iseqs: IseqCache,
    pub paths: PathRegistry,
}

static LOCATOR: OnceLock<Locator> = OnceLock::new();

/// Creates the locator with coverage's rules. None when a locator exists
/// already (coverage started twice, or after the comparison hooks).
pub fn init(paths: PathRegistry) -> Option<&'static Locator> {
    let mut created = false;
    let locator = LOCATOR.get_or_init(|| {
        created = true;
        Locator::new(paths)
    });
    created.then_some(locator)
}

/// The locator, creating one that includes all code when coverage has not
/// made one (cold: called when the comparison hooks are installed).
pub fn get_or_include_all() -> &'static Locator {
    LOCATOR.get_or_init(|| Locator::new(PathRegistry::new(Vec::new(), Vec::new())))
}

/// The locator, if one was made.
#[inline(always)]
pub fn get() -> Option<&'static Locator> {
    LOCATOR.get()
}

impl Locator {
    fn new(paths: PathRegistry) -> Locator {
        Locator {
            iseqs: IseqCache::new(),
            paths,
        }
    }

    /// The per-iseq part of `site`'s location, or None when its path
    /// cannot be read. `site` was read inside the native call `frame`
    /// stands for.
    #[inline(always)]
    pub fn iseq(&self, frame: &Frame, site: &Site) -> Option<IseqInfo> {
        let cached = site.iseq.and_then(|key| self.iseqs.get(key));
        cached.or_else(|| self.resolve(frame, site))
    }

    /// Marks the iseq `key` (body, instruction buffer) as switched off or
    /// on by quiet coverage.
    #[cold]
    pub fn mark(&self, key: (usize, usize), switched_off: bool) {
        self.iseqs.mark(key, switched_off);
    }

    #[cold]
    fn resolve(&self, frame: &Frame, site: &Site) -> Option<IseqInfo> {
        let path = frame.string_bytes(site.path)?;
        let path_hash = hash_bytes(path);
        let (path, included) = self.paths.lookup(path_hash, path);
        let info = IseqInfo {
            base: location::base(path_hash, site.start),
            path,
            included,
            switched_off: site.iseq.is_some_and(|(body, _)| quiet::switched_off(body)),
        };
        if let Some(iseq) = site.iseq {
            self.iseqs.put(iseq, info);
        }
        Some(info)
    }
}

/// The location id of `site`, whose iseq is described by `info`.
#[inline(always)]
pub fn location(info: &IseqInfo, site: &Site) -> u64 {
    location::mix(info.base ^ site.offset)
}

//! One way from a Ruby frame to a location: the per-iseq part of its id
//! (the path's hash mixed with where the iseq starts), the path's registry
//! entry, and whether the code is instrumented, remembered per iseq.
//!
//! The coverage hook locates events with it and the comparison hooks locate
//! their callers with it, so both agree on ids and on which code counts:
//! a comparison made by code that is not instrumented (ruzzy itself,
//! RubyGems, excluded paths) reports nothing and touches no counter.
//!
//! Invariants: no allocation and no lock after `new` (see `iseq_cache` and
//! `path_registry`); used with the GVL held.

use crate::iseq_cache::{IseqCache, IseqInfo};
use crate::location::{self, Site};
use crate::path_registry::{hash_bytes, PathRegistry};

pub struct Locator {
    iseqs: IseqCache,
    pub paths: PathRegistry,
}

impl Locator {
    pub fn new(paths: PathRegistry) -> Locator {
        Locator {
            iseqs: IseqCache::new(),
            paths,
        }
    }

    /// The per-iseq part of `site`'s location, or None when its path
    /// cannot be read.
    ///
    /// # Safety
    /// Inside the event hook or C method call that produced `site` (its
    /// path String is alive and no Ruby code has run since).
    #[inline(always)]
    pub unsafe fn iseq(&self, site: &Site) -> Option<IseqInfo> {
        let cached = site.iseq.and_then(|key| self.iseqs.get(key));
        // SAFETY (caller): as above.
        cached.or_else(|| unsafe { resolve(self, site) })
    }
}

/// # Safety
/// As for [`Locator::iseq`].
#[cold]
unsafe fn resolve(locator: &Locator, site: &Site) -> Option<IseqInfo> {
    // SAFETY (caller): the path String is alive.
    let path = unsafe { location::string_bytes(site.path)? };
    let path_hash = hash_bytes(path);
    let (path, included) = locator.paths.lookup(path_hash, path);
    let info = IseqInfo {
        base: location::base(path_hash, site.start),
        path,
        included,
    };
    if let Some(iseq) = site.iseq {
        locator.iseqs.put(iseq, info);
    }
    Some(info)
}

/// The location id of `site`, whose iseq is described by `info`.
#[inline(always)]
pub fn location(info: &IseqInfo, site: &Site) -> u64 {
    location::mix(info.base ^ site.offset)
}

//! The Ruby classes whose methods native code calls (`rb::Protected::
//! call_class_method`), named once: a misspelt path is one place to read,
//! and [`check`] finds it the first time fuzzing starts, not when a finding
//! is being reported (where the failure would only be printed).
//!
//! They are looked up by path on each call, not kept: the calls are rare
//! (a finding, a slow input), and the classes are defined after the
//! extension loads (`lib/ruzzy.rb` loads the detectors later; `require
//! "ruzzy/fuzzed_data_provider"` loads no finding code at all).
//!
//! Uses nothing of the crate: any layer may use it.
//!
//! May use: nothing.

use magnus::{prelude::*, Error, Ruby, Value};
use std::ffi::CStr;

/// A Ruby class or module native code calls methods of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RubyClass {
    /// Reports findings (`lib/ruzzy/findings/finding.rb`).
    Finding,
    /// The SSRF detector (`lib/ruzzy/detectors/ssrf.rb`).
    Ssrf,
    /// The ReDoS detector (`lib/ruzzy/detectors/redos.rb`).
    ReDoS,
    /// The regexp injection detector (`lib/ruzzy/detectors/regexp_injection.rb`).
    RegexpInjection,
}

impl RubyClass {
    /// Every class native code calls.
    pub const ALL: [RubyClass; 4] = [
        RubyClass::Finding,
        RubyClass::Ssrf,
        RubyClass::ReDoS,
        RubyClass::RegexpInjection,
    ];

    /// Its constant path.
    pub const fn path(self) -> &'static CStr {
        match self {
            RubyClass::Finding => c"Ruzzy::Finding",
            RubyClass::Ssrf => c"Ruzzy::Detectors::SSRF",
            RubyClass::ReDoS => c"Ruzzy::Detectors::ReDoS",
            RubyClass::RegexpInjection => c"Ruzzy::Detectors::RegexpInjection",
        }
    }

    fn name(self) -> &'static str {
        // The paths are ASCII literals.
        self.path().to_str().unwrap_or_default()
    }
}

/// Whether every [`RubyClass`] is defined (called when fuzzing starts, all
/// of ruzzy loaded); a LoadError naming the first one that is not.
pub fn check(ruby: &Ruby) -> Result<(), Error> {
    for class in RubyClass::ALL {
        if ruby
            .class_object()
            .funcall::<_, _, Value>("const_get", (class.name(),))
            .is_err()
        {
            return Err(Error::new(
                ruby.exception_load_error(),
                format!(
                    "ruzzy's native code calls {}, which its Ruby files do not define: they do \
                     not match; reinstall ruzzy",
                    class.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The paths of the classes native code calls
/// (`Ruzzy::Native::CALLED_CLASSES`).
pub fn paths(ruby: &Ruby) -> Value {
    let paths = ruby.ary_from_iter(RubyClass::ALL.iter().map(|class| class.name()));
    paths.freeze();
    paths.as_value()
}

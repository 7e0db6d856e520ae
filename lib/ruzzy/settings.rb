# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # The environment variables that hold ruzzy's own settings of a run, each
  # named once: read where the setting is decided (the engine, the
  # detectors, the comparison hooks, the dictionary, coverage locations, the
  # AddressSanitizer raise hook), and recorded by a campaign so that its
  # findings replay with them (Findings::Reproduction::ENVIRONMENT).
  #
  # A file of its own, requiring nothing: the campaign supervisor and
  # `ruzzy findings` need the names without loading the code that reads
  # them (some of it loads the native extension), and the extension reads
  # LOCATIONS from here when it loads.
  module Settings
    # The engine of Ruzzy.fuzz: libfuzzer or libafl (Engine::Choice).
    ENGINE = "RUZZY_ENGINE"
    # Detectors turned off, comma-separated, or "all" (Detectors).
    DISABLE_DETECTORS = "RUZZY_DISABLE_DETECTORS"
    # "0" no comparison hooks, "1" all, or a list of groups (CompareHooks).
    COMPARE_HOOKS = "RUZZY_COMPARE_HOOKS"
    # "0" turns the literal dictionary off (LiteralDictionary).
    LITERAL_DICT = "RUZZY_LITERAL_DICT"
    # "public" makes coverage locations come from the public API only
    # (ext/ruzzy/src/coverage/location.rs).
    LOCATIONS = "RUZZY_LOCATIONS"
    # Quiet coverage (Coverage.quiet): seconds without new coverage after
    # which a method's or block's coverage events are switched off, or
    # "0" (the default) to keep every event on.
    QUIET_COVERAGE = "RUZZY_QUIET_COVERAGE"
    # Its value for --quiet-coverage, which gives no time.
    QUIET_SECONDS = "10"
    # "0" leaves the stack poisoning Ruby's raise leaves under
    # AddressSanitizer alone (Session#clear_stack_poisoning_on_raise).
    ASAN_RAISE_HOOK = "RUZZY_ASAN_RAISE_HOOK"

    # Every one of them.
    ALL = [ENGINE, DISABLE_DETECTORS, COMPARE_HOOKS, LITERAL_DICT, LOCATIONS, QUIET_COVERAGE, ASAN_RAISE_HOOK].freeze

    # Not a setting of a run, so not in ALL (a replay is one process): the
    # number of worker processes a campaign or `ruzzy ci` uses when neither
    # --workers nor libFuzzer's -workers, -fork or -jobs chooses it
    # (CommandOptions.default_workers; default: one per core).
    WORKERS = "RUZZY_WORKERS"

    # Not a setting of a run either: the clang that builds sanitizer
    # preloads and instrumented C extensions (default: clang on PATH).
    CLANG = "RUZZY_CLANG"
  end
end

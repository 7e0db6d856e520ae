# frozen_string_literal: true

# May use: exit_status.

require_relative "exit_status"

module Ruzzy
  # The findings of a run or campaign: their kinds, identities and store.
  module Findings
    # The kinds of a group of findings, by name: the one place they are
    # spelt. A group's kind is Identity#kind, the first word of its
    # directory's name (`exception-0a1b2c3d4e`), the kind a campaign's
    # new-group line and `ruzzy findings` show. Code names a kind by its
    # key (`GROUP_KINDS.fetch(:exception)`), never by a string of its own:
    # test/unit/test_finding_kinds.rb fails on a kind compared as a loose
    # string, or a key that is not here.
    GROUP_KINDS = {
      # A Ruby exception (or another non-local exit) escaped the fuzz target.
      exception: "exception",
      # A bug detector fired (Detectors::Report).
      detector: "detector",
      # An AddressSanitizer report.
      asan: "asan",
      # An UndefinedBehaviorSanitizer runtime error.
      ubsan: "ubsan",
      # The groups of the kinds saved as artifacts (KINDS' +group+): a
      # deadly signal, a hang, running out of memory, a leak.
      signal: "signal",
      timeout: "timeout",
      oom: "oom",
      leak: "leak",
      # libFuzzer's "fuzz target exited".
      exit: "exit",
      # Any other report of libFuzzer or ruzzy, or a process that ended
      # without a report.
      crash: "crash",
      # A failure of ruzzy itself or of a sanitizer runtime, not of the fuzz
      # target (Identity's INTERNAL headlines).
      internal: "internal"
    }.freeze

    # A kind of finding that libFuzzer (or ruzzy in its place) saves as an
    # artifact file: +prefix+ names the file (`<prefix><sha1>`), +reporter+
    # and +headline+ are the report's `ERROR: <reporter>: <headline>` line
    # (libFuzzer's `SUMMARY:` line repeats the headline), +group+ is the kind
    # (GROUP_KINDS) a report with that headline has in a campaign (Identity,
    # the group directories' names), +exit_status+ how the run ends (nil: it goes on).
    Kind = Struct.new(:name, :prefix, :reporter, :headline, :group, :exit_status, keyword_init: true) do
      # Whether the run ends with this finding (a campaign's worker then
      # leaves its artifact for the supervisor to file).
      def ends_run? = !exit_status.nil?

      # The start of the report's first line: "ERROR: libFuzzer: timeout".
      def error_line = "ERROR: #{reporter}: #{headline}"

      # That line, as a Regexp whose first group is the headline; nil for a
      # kind that has none.
      def headline_pattern
        headline && /ERROR: #{Regexp.escape(reporter)}: (#{Regexp.escape(headline)})\b/
      end
    end

    # The kinds of finding, by name: the one place they are defined.
    #
    # Defined in Ruby, not in the native extension, because the campaign
    # supervisor and `ruzzy findings` read them without the extension loaded
    # (ArtifactFiling's ARTIFACT pattern, Identity's headlines). The native
    # code reads this table when it loads (ext/ruzzy/src/finding_kind.rs:
    # one Rust enum variant per kind, its prefix, headline and exit status
    # copied once for its signal handlers), and `require "ruzzy"` fails if a
    # kind it knows is missing here or one here is unknown to it.
    KINDS = {
      # A deadly signal: a segfault in a C extension, an abort; a Ruby
      # exception and a sanitizer report are saved as crash- files too.
      crash: Kind.new(name: :crash, prefix: "crash-", reporter: "libFuzzer", headline: "deadly signal",
                      group: GROUP_KINDS.fetch(:signal), exit_status: EXIT_FINDING),
      timeout: Kind.new(name: :timeout, prefix: "timeout-", reporter: "libFuzzer", headline: "timeout",
                        group: GROUP_KINDS.fetch(:timeout), exit_status: EXIT_TIMEOUT),
      oom: Kind.new(name: :oom, prefix: "oom-", reporter: "libFuzzer", headline: "out-of-memory",
                    group: GROUP_KINDS.fetch(:oom), exit_status: EXIT_OUT_OF_MEMORY),
      leak: Kind.new(name: :leak, prefix: "leak-", reporter: "LeakSanitizer", headline: "detected memory leaks",
                     group: GROUP_KINDS.fetch(:leak), exit_status: EXIT_FINDING),
      # An input far slower than the rest: reported, kept, and fuzzing goes on.
      slow_unit: Kind.new(name: :slow_unit, prefix: "slow-unit-", reporter: nil, headline: nil,
                          group: nil, exit_status: nil)
    }.each_value(&:freeze).freeze

    # Whether +kind+ (Identity#kind, a group's kind) is a hang's.
    def self.hang?(kind)
      kind == KINDS[:timeout].group
    end

    # The name of an artifact file of a finding that ended a run
    # ("crash-<sha1>", "timeout-<sha1>", ...).
    FINAL_ARTIFACT = /\A(?:#{Regexp.union(KINDS.values.select(&:ends_run?).map(&:prefix)).source})\h+\z/
  end
end

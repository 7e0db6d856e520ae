# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Regular-expression injection: a pattern built from the input that
    # fails to compile (Regexp.new and Regexp.compile, String#match and
    # match? given a String, an interpolated literal /#{input}/). Input
    # that breaks a pattern's syntax reached it unescaped, so it also
    # chooses what the pattern matches and how long matching takes. The
    # first RegexpError of an input is the finding, even when the program
    # rescues it; one caused only by bytes invalid in the pattern's
    # encoding is not (Regexp.escape keeps those). Regexp.escape and
    # Regexp.union of Strings quote the input: nothing to find.
    class RegexpInjection < Report
      NAME = :regexp_injection
      SUMMARY = "input compiled into a regular expression unescaped (a RegexpError, even when rescued)"

      # RegexpError messages that say the pattern's bytes are invalid in its
      # encoding, not that its syntax is broken.
      ENCODING_ERRORS = ["invalid multibyte character", "too short multibyte code string"].freeze

      class << self
        def install
          Ruzzy::Native._watch_pattern_errors(RegexpError)
        end

        # The finding for +error+, the input's first RegexpError, or nil
        # when it is an encoding error.
        def failed(error)
          message = error.message
          return if ENCODING_ERRORS.any? { |text| message.start_with?(text) }

          new("regular expression injection: a pattern built from the input failed to compile (#{message})",
              sink(error)).tap { |finding| finding.set_backtrace(error.backtrace || []) }
        end

        private

        # Where the pattern was compiled: "Regexp.new", or a pattern literal.
        def sink(error)
          label = error.backtrace_locations&.first&.label.to_s
          label.match?(/initialize|new|compile/) ? "Regexp.new" : "a pattern literal or String#match"
        end
      end
    end
  end
end

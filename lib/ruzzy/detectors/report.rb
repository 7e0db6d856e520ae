# frozen_string_literal: true

module Ruzzy
  # What every detector (detectors/*.rb) reports with: the canaries its
  # input must reach and Report, the class of its findings. The rest of
  # Ruzzy::Detectors is in detectors.rb.
  module Detectors
    # The canary command, path component and method name.
    CANARY = "ruzzy"

    # The canary as a word of query code (any case, as SQL reads it).
    BARE_CANARY = /\b#{CANARY}\b/i

    # The canary written into query code (SQL, XPath) where a value was
    # expected: out of a string literal of either quote, or after a value.
    QUERY_WORDS = ["' or #{CANARY} or '", "\" or #{CANARY} or \"", " or #{CANARY}", CANARY].freeze

    # The canary class and constant name.
    CANARY_CLASS = "RuzzyCanary"

    # A bug a detector found. It is recorded, then raised at the dangerous
    # call, which therefore never runs; recorded first, so a rescue in the
    # code under test cannot hide it. An Exception, not a StandardError, so
    # that a plain `rescue` does not catch it either. `ignore:` (or
    # --ignore) with a detector's class silences that detector's findings.
    class Report < Exception # rubocop:disable Lint/InheritException -- must get past `rescue => e`
      # The call the detector stopped ("Kernel#system").
      attr_reader :sink

      def initialize(message = nil, sink = nil)
        super(message)
        @sink = sink
      end

      # The detector's name (:command_injection).
      def detector
        self.class::NAME
      end
    end
  end
end

# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Regular-expression denial of service: a match that runs past SECONDS.
    # Where Ruby has Regexp.timeout (3.2 and later), it is set to SECONDS
    # unless the program set one, and the first Regexp::TimeoutError of an
    # input is the finding, even when the program rescues it. On Ruby 3.1
    # the comparison hooks number each match (Regexp, String and
    # StringScanner methods), and a watchdog thread, waking every quarter
    # of SECONDS, raises the finding into one match that runs longer.
    # The finding names the pattern and where it was matched.
    class ReDoS < Report
      NAME = :redos

      # How long one match may run.
      SECONDS = 1.0

      SUMMARY = "regular expression matches that run for more than #{SECONDS} s (catastrophic backtracking)".freeze

      class << self
        def install
          if defined?(Regexp::TimeoutError) # Ruby 3.2's Regexp.timeout
            Regexp.timeout ||= SECONDS
            Ruzzy::Native._watch_regexp_timeouts(Regexp::TimeoutError)
          else
            Ruzzy::Native._time_regexp_matches
            watchdog(Thread.current)
            require_relative "../feedback/compare_hooks" # the extension's, loaded only when fuzzing
            return if CompareHooks.installed?([:regexp])

            warn "INFO: ruzzy: the redos detector times matches through the regexp comparison hooks on " \
                 "Ruby #{RUBY_VERSION}, which are off: it will find nothing"
          end
        end

        # The thread (started on first call) that raises the finding into
        # +thread+ when one hooked match has been running for SECONDS: it
        # looks four times a second, and times a match from when it first
        # saw it, so a report means at least SECONDS.
        def watchdog(thread)
          @watchdog ||= Thread.new do
            seen = since = nil
            loop do
              sleep(SECONDS / 4)
              pattern, number = Ruzzy::Native._running_match
              now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
              unless number && number == seen
                seen = number
                since = now
              end
              next if number.nil? || now - since < SECONDS

              thread.raise(slow_match(pattern, now - since))
              seen = nil
            end
          end
        end

        # The finding for +error+, a Regexp::TimeoutError raised while
        # matching +pattern+ (nil when not known).
        def timed_out(error, pattern)
          new("regular expression denial of service: matching #{describe(pattern)} ran past " \
              "Regexp.timeout (#{Regexp.timeout} s)", "Regexp match").tap do |finding|
            finding.set_backtrace(error.backtrace || [])
          end
        end

        # The finding for a match of +pattern+ that has run +seconds+
        # (Rubies without Regexp.timeout), recorded for the input.
        def slow_match(pattern, seconds)
          finding = new("regular expression denial of service: matching #{describe(pattern)} ran " \
                        "#{format("%.2f", seconds)} s (more than #{SECONDS} s)", "Regexp match")
          Ruzzy::Native._detector_report(finding)
          finding
        end

        def describe(pattern)
          text = pattern.nil? ? "a regular expression" : pattern.inspect
          text.length > 120 ? "#{text[0, 120]}..." : text
        end
      end
    end
  end
end

# frozen_string_literal: true

module Ruzzy
  module Detectors
    # Regular-expression denial of service: a match that runs past SECONDS.
    # Where Ruby has Regexp.timeout (3.2 and later), it is set to SECONDS
    # unless the program set one, and the first Regexp::TimeoutError of an
    # input is the finding, even when the program rescues it. On Ruby 3.1
    # the comparison hooks note when each match (Regexp, String and
    # StringScanner methods) starts, and a watchdog thread, waking every
    # quarter of SECONDS, raises the finding into a match running longer.
    # The finding names the pattern and where it was matched.
    class ReDoS < Report
      NAME = :redos

      # How long one match may run.
      SECONDS = 1.0

      SUMMARY = "regular expression matches that run for more than #{SECONDS} s (catastrophic backtracking)".freeze

      class << self
        def install
          if Regexp.respond_to?(:timeout=)
            Regexp.timeout ||= SECONDS
            Ruzzy._watch_regexp_timeouts(Regexp::TimeoutError)
          else
            Ruzzy._time_regexp_matches
            start_watchdog(Thread.current)
            return if CompareHooks.installed?([:regexp])

            warn "INFO: ruzzy: the redos detector times matches through the regexp comparison hooks on " \
                 "Ruby #{RUBY_VERSION}, which are off: it will find nothing"
          end
        end

        # A thread that raises the finding into +thread+ when a hooked
        # match has run longer than SECONDS.
        def start_watchdog(thread)
          @watchdog ||= Thread.new do
            loop do
              sleep(SECONDS / 4)
              pattern, seconds = Ruzzy._running_match
              thread.raise(slow_match(pattern, seconds)) if seconds && seconds > SECONDS
            end
          end
        end

        def words
          []
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
          Ruzzy._detector_report(finding)
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

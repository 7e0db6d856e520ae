# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Regular-expression denial of service: one match that uses more than
    # SECONDS of CPU time. The regexp comparison hooks number each match,
    # and a watch (#look, every PERIOD or more often: on the hang watch's
    # thread when there is one, else on a thread of its own, #watch_alone)
    # reads which match runs and the CPU time of the thread running the
    # target; once one match has used SECONDS since the watch first saw it,
    # it raises the finding into it (Ruby checks for that inside the match),
    # even when the program rescues it. CPU time, not the wall clock: a match does not
    # become a finding because other processes had the cores, so a campaign
    # on a busy machine reports only what replays on an idle one. Replaying
    # files (libFuzzer's run of given inputs), the limit is SLACK lower, the
    # most the watch can be late to see a match start on an idle machine:
    # a campaign's finding reproduces.
    # Where Ruby has Regexp.timeout (3.2 and later), it is set to
    # BACKSTOP_SECONDS unless the program set one, for matches the hooks do
    # not see (C code's); the first Regexp::TimeoutError of an input is then
    # the finding. The finding names the pattern and where it was matched.
    class ReDoS < Report
      NAME = :redos

      # How much CPU time one match may use.
      SECONDS = 1.0

      # How often the watch looks (at most: the hang watch looks more often).
      PERIOD = SECONDS / 8

      # How late the watch can see a match start: a PERIOD, and Ruby's
      # thread time slice (100 ms) before it gets to run.
      SLACK = 0.25

      # Regexp.timeout for matches the hooks do not see (wall clock).
      BACKSTOP_SECONDS = 4 * SECONDS

      SUMMARY = "regular expression matches that use more than #{SECONDS} s of CPU time " \
                "(catastrophic backtracking)".freeze

      class << self
        # Whether the inputs are given files, replayed (see SLACK).
        attr_writer :replaying

        def install
          if defined?(Regexp::TimeoutError) # Ruby 3.2's Regexp.timeout
            Regexp.timeout ||= BACKSTOP_SECONDS
            Ruzzy::Native._watch_regexp_timeouts(Regexp::TimeoutError)
          end
          Ruzzy::Native._time_regexp_matches
          @fuzzing = Thread.current
          require_relative "../feedback/compare_hooks" # the extension's, loaded only when fuzzing
          return if CompareHooks.installed?([:regexp])

          found = defined?(Regexp::TimeoutError) ? "only matches past Regexp.timeout are found" : "it will find nothing"
          warn "INFO: ruzzy: the redos detector times matches through the regexp comparison hooks, " \
               "which are off: #{found}"
        end

        # CPU seconds one match may use before it is a finding.
        def limit
          @replaying ? SECONDS - SLACK : SECONDS
        end

        def limit_text
          text = "the limit is #{SECONDS} s"
          @replaying ? "#{text}, less #{SLACK} s when replaying a file: the watch can see a match start late" : text
        end

        # Whether #look has a thread to run it (the detector is installed).
        def watching?
          !@fuzzing.nil?
        end

        # One look at the running match: raises the finding into the thread
        # running the target when one hooked match has used +limit+ CPU
        # seconds since a look first saw it running, so a report means at
        # least that. Called from another thread, PERIOD apart or less.
        def look
          pattern, number, cpu = Ruzzy::Native._running_match
          if number.nil? || cpu.nil? || number != @seen
            @seen = number
            @since = cpu
            return
          end
          return if cpu - @since < limit

          @seen = nil
          @fuzzing.raise(slow_match(pattern, cpu - @since))
        end

        # A thread that looks every PERIOD, when no other thread does (no
        # hang watch); started once.
        def watch_alone
          return unless watching?

          @watch_alone = nil unless @watch_alone&.alive?
          @watch_alone ||= Thread.new do
            loop do
              sleep(PERIOD)
              look
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

        # The finding for a match of +pattern+ seen using +seconds+ of CPU
        # time, recorded for the input.
        def slow_match(pattern, seconds)
          finding = new("regular expression denial of service: matching #{describe(pattern)} used " \
                        "#{format("%.2f", seconds)} s of CPU time and was still running (#{limit_text})",
                        "Regexp match")
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

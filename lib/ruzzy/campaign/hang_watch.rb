# frozen_string_literal: true

require_relative "protocol"
require_relative "hang_trace"
require_relative "../user_code"
require_relative "../native"

module Ruzzy
  module Campaign
    # A campaign worker's watch for hangs in Ruby code: a thread that, when
    # the running input has taken almost -timeout, raises InputTimeout in
    # the fuzzing thread. The frames the hang stayed in make its report
    # (HangTrace follows the input's last TRACE_SECONDS for them), the
    # finding is recorded like an exception, and the worker goes on
    # instead of being ended by libFuzzer's timeout (which still ends a hang
    # in C code, which never comes back to Ruby to take the exception).
    # Once a hang was found (by this worker, or on file in the findings
    # directory when it started: another worker's, an earlier campaign's),
    # the watch stops inputs after REPEAT_SECONDS: the fuzzer finds the
    # same hang again and again, and each costs that.
    #
    # Outside a campaign the watch only follows: an input about to reach
    # libFuzzer's -timeout is traced, and libFuzzer's timeout report (at
    # Ruby's safe point, Findings::Report.current_frames) names the hang by the same
    # frames, so a replayed hang is the group the campaign filed.
    #
    # The thread checks while it holds the GVL, which the fuzzing thread
    # gives up only inside the target (at Ruby's safe points or blocking
    # calls): the exception lands in the input that overran. The same
    # thread prints, every REACH_SECONDS, the lines and edges the coverage reached
    # (Campaign.reached_line) for the supervisor's status line.
    module HangWatch
      # Raised in the target when it overruns; not a StandardError, so a
      # target's `rescue => e` does not swallow it.
      class InputTimeout < Exception # rubocop:disable Lint/InheritException -- must pass through rescue => e
        # The limit, and the frames the hang stayed in (HangTrace#finish;
        # nil: unknown, the exception's backtrace stands in).
        attr_reader :seconds, :loop_frames

        def initialize(seconds, loop_frames = nil)
          @seconds = seconds
          @loop_frames = loop_frames
          super("the fuzz target ran for #{seconds} s")
        end
      end

      # How long before libFuzzer's own timeout the watch raises.
      MARGIN = 0.5
      # The limit once a hang was found: 2,000 times a slow input's 250 µs.
      REPEAT_SECONDS = 0.5
      # How often it looks.
      PERIOD = 0.1
      # How often it prints what the coverage reached.
      REACH_SECONDS = 2
      # How long before the limit it starts following an input's frames.
      TRACE_SECONDS = 0.25

      module_function

      # Starts watching with libFuzzer's -timeout +seconds+ (0: none): in a
      # campaign's worker (+campaign+), stopping hangs, after REPEAT_SECONDS
      # from the first input when a hang is known already (+hang_known+);
      # else only following them for libFuzzer's report.
      def start(seconds, campaign: true, hang_known: false)
        return if seconds <= 0 || @thread

        @campaign = campaign
        @limit = campaign ? [seconds - MARGIN, seconds / 2.0].max : seconds
        shorten if campaign && hang_known
        fuzzing = Thread.current
        @trace = HangTrace.new(fuzzing)
        @thread = Thread.new { watch(fuzzing) }
      end

      # The frames the running input's hang stayed in (HangTrace#finish),
      # or nil; asked on the fuzzing thread by libFuzzer's timeout report.
      def loop_frames
        @trace&.finish(Ruzzy::Native._overdue_input(0))
      end

      # A hang was found: later ones are stopped sooner.
      def shorten
        @limit = [@limit, REPEAT_SECONDS].min if @limit
      end

      # Prints the lines and edges reached; returns when.
      def report_reach
        reached = Ruzzy::Native._reached.reject { |path, _| path.empty? }
        users = reached.select { |path, _| UserCode.include?(path) }.values
        $stderr.write(Campaign.reached_line(users.sum(&:first), users.sum(&:last), reached.values.sum(&:first),
                                            Ruzzy::Native._executions))
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Follows an input close to the limit; in a campaign, raises once per
      # overdue input (an input is known by its start time) that it
      # followed since an earlier look.
      def watch(fuzzing)
        raised = nil
        reported = 0.0
        loop do
          sleep PERIOD
          if @campaign && Process.clock_gettime(Process::CLOCK_MONOTONIC) - reported >= REACH_SECONDS
            reported = report_reach
          end
          limit = @limit
          followed = @trace.follow(Ruzzy::Native._overdue_input([limit - TRACE_SECONDS, PERIOD].max))
          next unless @campaign && followed

          overdue = Ruzzy::Native._overdue_input(limit)
          next if overdue.nil? || overdue == raised

          raised = overdue
          fuzzing.raise(InputTimeout.new(limit, @trace.finish(overdue)))
        end
      end
    end
  end
end

# frozen_string_literal: true

require_relative "protocol"
require_relative "../user_code"

module Ruzzy
  module Campaign
    # A campaign worker's watch for hangs in Ruby code: a thread that, when
    # the running input has taken almost -timeout, raises InputTimeout in
    # the fuzzing thread. The input's frames at that moment make its report,
    # the finding is recorded like an exception, and the worker goes on
    # instead of being ended by libFuzzer's timeout (which still ends a hang
    # in C code, which never comes back to Ruby to take the exception).
    # Once a hang was found, the watch stops inputs after REPEAT_SECONDS:
    # the fuzzer finds the same hang again and again, and each costs that.
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
        attr_reader :seconds

        def initialize(seconds)
          @seconds = seconds
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
      REACH_SECONDS = 5

      module_function

      # Starts watching with libFuzzer's -timeout +seconds+ (0: none).
      def start(seconds)
        return if seconds <= 0 || @thread

        @limit = [seconds - MARGIN, seconds / 2.0].max
        fuzzing = Thread.current
        @thread = Thread.new { watch(fuzzing) }
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

      # Raises once per overdue input (an input is known by its start time).
      def watch(fuzzing)
        raised = nil
        reported = 0.0
        loop do
          sleep PERIOD
          reported = report_reach if Process.clock_gettime(Process::CLOCK_MONOTONIC) - reported >= REACH_SECONDS
          limit = @limit
          overdue = Ruzzy::Native._overdue_input(limit)
          next if overdue.nil? || overdue == raised

          raised = overdue
          fuzzing.raise(InputTimeout.new(limit))
        end
      end
    end
  end
end

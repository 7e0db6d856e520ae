# frozen_string_literal: true

require_relative "../findings/store"
require_relative "../findings/reproduction"

module Ruzzy
  module Campaign
    # What the campaign's checks of inputs run alone share (HangCheck,
    # AloneCheck): one run at a time, as `ruzzy findings replay` runs an
    # input (the campaign's command, directory and environment, -timeout at
    # the hang threshold), on a thread of their own beside the workers (a
    # lone run may take the threshold; the workers go on meanwhile). The
    # thread uses a Store of its own (its own lock file handle) and hands
    # what it found to the supervisor's thread through a queue (#show).
    #
    # A check names what waits (#pending, the next first) and what is left
    # to check when the campaign ends (#last), checks one (#check, running
    # it with #run_alone), and says what a result found (#news: a line, or
    # nil) unless it filed a new group (its +filed+ is :new), which the
    # supervisor announces.
    class LoneCheck
      # Seconds the thread waits when there is nothing to check.
      IDLE = 0.5

      # +dir+: the findings directory; +reproduction+ runs the harness as
      # the campaign does; +seconds+ the hang threshold (whole seconds);
      # +display+ shows what was found, +announce+ (group, kind, title) a
      # new group.
      def initialize(dir:, reproduction:, seconds:, display:, announce:)
        @store = Findings::Store.new(dir)
        @reproduction = reproduction
        @seconds = seconds
        @display = display
        @announce = announce
        @results = Thread::Queue.new
        @stop = false
        @interrupted = false
        @thread = nil
        # The pid of the run going on, if one is.
        @running = nil
      end

      # Starts checking on a thread of its own.
      def start
        @thread = Thread.new do
          Thread.current.report_on_exception = false
          until @stop
            item = pending.first
            item ? check(item) : sleep(IDLE)
          end
        end
        self
      end

      # Stops the thread once its check ends, or at once when +remaining+
      # is false (the campaign was interrupted: the run going on is
      # killed); with +remaining+, checks what #last names. Returns how
      # many were checked then.
      def finish(remaining: true)
        @stop = true
        @interrupted = !remaining
        Findings::Reproduction.kill(@running) if @running && @interrupted
        @thread&.join
        return 0 unless remaining

        left = last
        left.each { |item| check(item) }
        left.size
      end

      # Says what the checks found since the last look.
      def show
        show_result(@results.pop) until @results.empty?
      end

      private

      # Shows +result+ (a check's Result, with its +identity+ and +filed+).
      def show_result(result)
        identity = result.identity
        return @announce.call(identity.group, identity.kind, identity.title) if result.filed == :new

        line = news(result)
        @display.news(line) if line
      end

      # Runs the input file +path+ alone; its output and Process::Status.
      # A run still going after run_limit is killed.
      def run_alone(path)
        @reproduction.run("-timeout=#{@seconds}", path, limit: run_limit) { |pid| @running = pid }
      ensure
        @running = nil
      end

      # Seconds a lone run may take in all: the harness's start-up, the
      # threshold, libFuzzer's alarm (a second late at most) and its report.
      def run_limit = (@seconds * 2) + 60

      # Whether the run was killed at run_limit (a harness that never got
      # to its input).
      def killed?(status) = status.termsig == Signal.list.fetch("KILL")
    end
  end
end

# frozen_string_literal: true

require_relative "../campaign_protocol"
require_relative "hang_trace"
require_relative "../user_code"
require_relative "../native"
require_relative "../findings/input_timeout"
require_relative "../findings/report"

module Ruzzy
  module Engine
    # A campaign worker's watch for hangs in Ruby code: a thread that, when
    # the running input has taken almost -timeout, raises
    # Findings::InputTimeout in the fuzzing thread. The frames the hang
    # stayed in make its report (HangTrace follows the input's last
    # TRACE_SECONDS for them), Findings::Report keeps the input as a suspect
    # (Findings::Suspects: the supervisor files it only if it runs over the
    # threshold alone), and the worker goes on
    # instead of being ended by libFuzzer's timeout (which still ends a hang
    # in C code, which never comes back to Ruby to take the exception).
    # Once a hang was found or suspected (by this worker, or in the findings
    # directory: another worker's, an earlier campaign's), the watch stops
    # inputs after REPEAT_SECONDS: the fuzzer finds the same hang again and
    # again, and each costs that. An input that stays in the loop of such a
    # hang (its frames name that hang's group) is stopped sooner, after
    # KNOWN_SECONDS: a repeat of a known hang costs the least, and a slow
    # input anywhere else still has REPEAT_SECONDS. Stopping sooner only
    # saves time: what is stopped before the threshold is never a finding
    # until a lone run of it says so.
    #
    # Outside a campaign the watch only follows: an input about to reach
    # libFuzzer's -timeout is traced, and libFuzzer's timeout report (at
    # Ruby's safe point, Findings::Report.current_frames) names the hang by the same
    # frames, so a replayed hang is the group the campaign filed.
    #
    # The road goes down only: the watch calls Findings (Report.hang_group
    # names a hang's group), and Findings asks the watch what it followed
    # (loop_frames, ready_to_name?) and tells it what hang it filed (learn)
    # through the Findings::Context the Session hands it, never by name.
    #
    # The thread checks while it holds the GVL, which the fuzzing thread
    # gives up only inside the target (at Ruby's safe points or blocking
    # calls): the exception lands in the input that overran. A thread that
    # wants the GVL waits for the running one's time slice to end: 100 ms
    # at the default priority, and each look of the watch (waking from its
    # sleep, reading the findings directory, printing) waits once or more.
    # So the fuzzing thread runs at FUZZING_PRIORITY, whose slice is an
    # eighth of that. The same
    # thread prints, every REACH_SECONDS, the lines and edges the coverage reached
    # (Campaign.reached_line) for the supervisor's status line.
    module HangWatch
      # The limit once a hang was found: 2,000 times a slow input's 250 µs.
      REPEAT_SECONDS = 0.5
      # How often it looks.
      PERIOD = 0.1
      # How often it prints what the coverage reached.
      REACH_SECONDS = 2
      # How long before the limit it starts following an input's frames.
      TRACE_SECONDS = 0.25
      # When a hang is known: how long an input runs before the watch
      # follows its frames, and before one that stays in a known hang's loop
      # is stopped (400 times a slow input's 250 µs), and how often the
      # watch looks (it waits for the fuzzing thread's time slice for the GVL).
      KNOWN_FOLLOW_SECONDS = 0.05
      KNOWN_SECONDS = 0.1
      KNOWN_PERIOD = 0.02
      # The fuzzing thread's priority while watched: the lowest, whose time
      # slice is 100 ms >> 3 (12.5 ms). At the default priority, on Ruby 3.3
      # and 3.4, each look took 0.2 to 0.4 s and a hang on a worker's first
      # timeout went past -timeout before the watch could stop it.
      FUZZING_PRIORITY = -3

      module_function

      # Starts watching with libFuzzer's -timeout +seconds+ (0: none): in a
      # campaign's worker (+findings+, its Findings::Store), stopping hangs
      # (sooner from the first input when one is on file); else only
      # following them for libFuzzer's report. Each of +looks+ (callables)
      # is called on every look too. Returns whether it watches.
      def start(seconds, findings: nil, looks: [])
        return !@thread.nil? if seconds <= 0 || @thread

        @findings = findings
        @known = []
        @limit = findings ? [seconds - Campaign::WATCH_MARGIN, seconds / 2.0].max : seconds
        learn(findings.hang_groups) if findings
        fuzzing = Thread.current
        fuzzing.priority = FUZZING_PRIORITY
        @trace = HangTrace.new(fuzzing)
        @looks = looks
        @thread = Thread.new { watch(fuzzing) }
        true
      end

      # The frames the running input's hang stayed in (HangTrace#finish),
      # or nil; asked on the fuzzing thread by libFuzzer's timeout report.
      def loop_frames
        @trace&.finish(Ruzzy::Native._overdue_input(0))
      end

      # At Ruby's safe point after libFuzzer's alarm
      # (Findings::Report.hang_followed?): whether the frames the running
      # input's hang stayed in are known, or were looked for over an alarm's
      # period (a loop that calls no Ruby method or block returns nothing to
      # see). When the watch had not followed it, or had seen nothing return
      # yet (its thread got no turn, or got it just before the alarm: a C
      # call holding Ruby's lock, a busy machine), it follows it from now on
      # and says no, once per input: the report waits for the next alarm, so
      # a hang is named by its loop whether the watch or the alarm stopped
      # it. Once it says yes, the following stops (the report comes next):
      # what ruzzy's own code does meanwhile is never the hang's.
      def ready_to_name?
        input = @trace && Ruzzy::Native._overdue_input(0)
        return true if input.nil?

        @trace.unseen do
          if @waited == input || (@trace.following?(input) && @trace.frames(input))
            @trace.finish(input)
            next true
          end
          @waited = input
          @trace.follow(input)
          false
        end
      end

      # Hangs were found or suspected (+groups+, their Findings::Identity
      # groups; Findings::Report tells of each it files): later ones are
      # stopped sooner, repeats of these soonest.
      def learn(groups)
        return if @limit.nil? || (groups - @known).empty?

        @limit = [@limit, REPEAT_SECONDS].min
        @known |= groups
        @not_known = nil
      end

      # Prints the lines and edges reached; returns when.
      def report_reach
        reached = Ruzzy::Native._reached.reject { |path, _| path.empty? }
        users = reached.select { |path, _| UserCode.include?(path) }.values
        $stderr.write(Campaign.reached_line(users.sum(&:first), users.sum(&:last), reached.values.sum(&:first),
                                            Ruzzy::Native._executions))
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Follows an input close to the limit (from KNOWN_FOLLOW_SECONDS when
      # a hang is known); in a campaign, raises once per overdue input (an
      # input is known by its start time) that it followed since an earlier
      # look and whose loop the trace saw (or that it looked at once more).
      # Every REACH_SECONDS it learns the hangs other workers filed.
      def watch(fuzzing)
        raised = waited = nil
        reported = 0.0
        loop do
          sleep(@known.empty? ? PERIOD : KNOWN_PERIOD)
          @looks.each(&:call)
          if @findings && Process.clock_gettime(Process::CLOCK_MONOTONIC) - reported >= REACH_SECONDS
            reported = report_reach
            learn(@findings.hang_groups)
          end
          limit = @limit
          next unless follow(limit) && @findings

          overdue = Ruzzy::Native._overdue_input(limit)
          next if overdue.nil? || overdue == raised

          # Named by its loop: once the trace saw the loop return, or after
          # one more look (a loop that calls nothing is named by the moment).
          unless @trace.frames(overdue) || waited == overdue
            waited = overdue
            next
          end

          raised = overdue
          fuzzing.raise(Findings::InputTimeout.new(limit, @trace.finish(overdue)))
        end
      end

      # Follows the input that ran for TRACE_SECONDS less than +limit+, or
      # in a campaign that knows a hang for KNOWN_FOLLOW_SECONDS, checking
      # that one for known hangs (#stop_known); returns whether it was
      # followed already.
      def follow(limit)
        if @findings && !@known.empty?
          input = Ruzzy::Native._overdue_input(KNOWN_FOLLOW_SECONDS)
          return @trace.follow(input, &method(:stop_known))
        end
        @trace.follow(Ruzzy::Native._overdue_input([limit - TRACE_SECONDS, PERIOD].max))
      end

      # On the fuzzing thread (HangTrace's check): stops +input+ when it
      # has run KNOWN_SECONDS and the frames it stayed in (+frames+) make
      # a known hang's group (Findings::Report.hang_group). Frames found not
      # to be are remembered.
      def stop_known(input, frames)
        return if frames.nil? || frames == @not_known || Ruzzy::Native._overdue_input(KNOWN_SECONDS) != input

        unless @known.include?(Findings::Report.hang_group(frames))
          @not_known = frames
          return
        end
        @trace.finish(input)
        raise Findings::InputTimeout.new(KNOWN_SECONDS, frames, known: true)
      end
    end
  end
end

# frozen_string_literal: true

require_relative "../exit_status"
require_relative "../campaign_protocol"
require_relative "../error"
require_relative "../shown_duration"
require_relative "../findings/identity"
require_relative "../finding_kinds"
require_relative "../findings/store"
require_relative "../findings/reproduction"

module Ruzzy
  module Campaign
    # The supervisor's check of suspected hangs (Findings::Suspects): each
    # is run alone, as `ruzzy findings replay` runs a group's input (the
    # campaign's command, directory and environment), with -timeout set to
    # the campaign's hang threshold. One that runs over it is a hang: filed
    # in the group that lone run names (libFuzzer's timeout report, whose
    # frames are the loop's), with how long it ran. One that finishes is
    # not: it is dropped, and said so. One that fails another way is that
    # finding, filed as such. So every hang on file is an input measured to
    # run over the threshold alone, named by one rule, whether a worker's
    # watch or libFuzzer's alarm stopped it first.
    #
    # Checks run one at a time on a thread of their own (a lone run of a
    # real hang takes the threshold; the workers go on meanwhile). A
    # suspect of a group with nothing on file comes first; one of a group on
    # file is checked only if it is smaller than the group's input (it would
    # replace it), at most SMALLER_CHECKS times a group. A suspect group
    # whose suspects finished alone FINISHED_CHECKS times (a slow loop that
    # ends) has its other suspects dropped unchecked, unless one was stopped
    # only at the threshold. The thread uses a Store of its own (its own
    # lock file handle) and hands what it found to the supervisor's thread
    # through a queue (#each_result).
    class HangCheck
      FINISHED_CHECKS = 3
      SMALLER_CHECKS = 3
      # Seconds the thread waits when there is nothing to check.
      IDLE = 0.5

      # What one check found: +outcome+ :hang, :finished, :other (another
      # finding) or :not_run; +identity+ that of the lone run's report;
      # +filed+ the Store#record outcome (:new, :smaller, :repeat) or nil.
      Result = Struct.new(:suspect, :outcome, :identity, :seconds, :filed, :detail, keyword_init: true)

      # +dir+: the findings directory; +reproduction+ runs the harness as
      # the campaign does; +seconds+ the hang threshold (whole seconds);
      # +display+ shows what was found, +announce+ (group, kind, title) a
      # new group.
      def initialize(dir:, reproduction:, seconds:, display:, announce:)
        @store = Findings::Store.new(dir)
        @suspects = @store.suspects
        @reproduction = reproduction
        @seconds = seconds
        @display = display
        @announce = announce
        @results = Thread::Queue.new
        @finished = Hash.new(0)
        @smaller = Hash.new(0)
        @stop = false
        @interrupted = false
        @thread = nil
        # The pid of the check running, if one is.
        @running = nil
      end

      # The line that says what +result+ found when it is not a new group
      # (the supervisor announces those), or nil; +threshold+ in seconds.
      def self.news(result, threshold)
        suspect = result.suspect
        case result.outcome
        when :finished
          ran = result.seconds ? " in #{ShownDuration.of(result.seconds)}" : ""
          "  not a hang: a #{suspect.bytes}-byte input stopped after #{ShownDuration.of(suspect.seconds)} " \
            "finished#{ran} alone (the hang threshold is #{threshold} s)"
        when :not_run then "  a suspected hang could not be checked: #{result.detail}"
        else
          "  smaller input for #{result.identity.group}: #{suspect.bytes} bytes" if result.filed == :smaller
        end
      end

      # Starts checking on a thread of its own.
      def start
        @thread = Thread.new do
          Thread.current.report_on_exception = false
          until @stop
            suspect = next_suspect
            suspect ? check(suspect) : sleep(IDLE)
          end
        end
        self
      end

      # Stops the thread once its check ends; with +remaining+, checks
      # what is left of the groups with nothing on file (one suspect each,
      # the smallest: no hang goes unfiled because the campaign ended).
      # Returns how many were checked then.
      def finish(remaining: true)
        @stop = true
        @interrupted = !remaining
        Findings::Reproduction.kill(@running) if @running && @interrupted
        @thread&.join
        return 0 unless remaining

        last = next_suspects.reject { |suspect| on_file(suspect) }.uniq(&:group)
        last.each { |suspect| check(suspect) }
        last.size
      end

      # Suspects of groups with nothing on file, waiting now.
      def waiting
        next_suspects.count { |suspect| !on_file(suspect) }
      end

      # Says what the checks found since the last look.
      def show
        each_result do |result|
          identity = result.identity
          next @announce.call(identity.group, identity.kind, identity.title) if result.filed == :new

          line = HangCheck.news(result, @seconds)
          @display.news(line) if line
        end
      end

      # At the campaign's end: checks the suspects of groups with nothing
      # on file (#finish) and shows what was found.
      def check_last
        count = waiting
        if count.positive?
          @display.news("ruzzy: checking #{count} suspected hang(s) alone, up to #{@seconds} s each " \
                        "(the hang threshold)")
        end
        finish
        show
      end

      # Yields each Result found since the last call.
      def each_result
        yield @results.pop until @results.empty?
      end

      private

      def next_suspect = next_suspects.first

      # The suspects worth a check, new groups first, smallest first; drops
      # those that are not.
      def next_suspects
        wanted, unwanted = @suspects.pending.partition { |suspect| wanted?(suspect) }
        unwanted.each { |suspect| @suspects.delete(suspect) }
        wanted.sort_by { |suspect| [on_file(suspect) ? 1 : 0, suspect.bytes] }
      end

      def wanted?(suspect)
        group = on_file(suspect)
        if group
          suspect.bytes < group.bytes.to_i && @smaller[group.name] < SMALLER_CHECKS
        else
          @finished[suspect.group] < FINISHED_CHECKS || suspect.seconds >= @seconds - WATCH_MARGIN
        end
      end

      # The group on file a suspect would join, or nil.
      def on_file(suspect)
        name = @suspects.confirmed.fetch(suspect.group, suspect.group)
        group = @store.named(name)
        group if group && Findings.hang?(group.kind)
      end

      # Runs +suspect+ alone and files what it found. A run killed because
      # the campaign was interrupted leaves the suspect for the next one.
      def check(suspect)
        input = suspect.input
        known = on_file(suspect)
        @smaller[known.name] += 1 if known
        output, status = @reproduction.run("-timeout=#{@seconds}", suspect.path, limit: run_limit) do |pid|
          @running = pid
        end
        return if @interrupted

        @results << if killed?(status)
                      not_run(suspect, "it did not end within #{run_limit} s")
                    else
                      file(suspect, input, output, status)
                    end
        @suspects.delete(suspect)
      rescue SystemCallError, Error => e
        @results << not_run(suspect, e.message)
        @suspects.delete(suspect)
      ensure
        @running = nil
      end

      # Files what the lone run of +suspect+ (+input+) found; its Result.
      def file(suspect, input, output, status)
        identity = Findings::Identity.of_report(output)
        if status.success?
          @finished[suspect.group] += 1
          millis = output[/^Executed .* in (\d+) ms$/, 1]
          return Result.new(suspect:, outcome: :finished, seconds: millis && (millis.to_i / 1000.0))
        end
        return not_run(suspect, output.lines.last(8).join) unless ran?(status)

        hang = Findings.hang?(identity.kind)
        seconds = hang ? ran_for(output) : nil
        report = @reproduction.filed_in(output, from: suspect.path, dir: @store.dir, group: identity.group)
        filed = @store.record(identity, input, report, seconds:, alone: "fails")
        @suspects.confirm(suspect.group, identity.group) if hang
        Result.new(suspect:, outcome: hang ? :hang : :other, identity:, seconds:, filed:)
      end

      # Seconds a check may take in all: the harness's start-up, the
      # threshold, libFuzzer's alarm (a second late at most) and its report.
      def run_limit = (@seconds * 2) + 60

      def not_run(suspect, detail) = Result.new(suspect:, outcome: :not_run, detail:)

      def killed?(status) = status.termsig == Signal.list.fetch("KILL")

      def ran?(status)
        status.exitstatus.nil? || Findings::Reproduction::FINDING_STATUSES.include?(status.exitstatus)
      end

      # How long the lone run's input had run when libFuzzer's alarm ended
      # it (at least the threshold).
      def ran_for(output)
        alarm = output[/ALARM: working on the last Unit for (\d+) seconds/, 1]
        [alarm.to_i, @seconds].max
      end
    end
  end
end

# frozen_string_literal: true

require_relative "../exit_status"
require_relative "../campaign_protocol"
require_relative "../error"
require_relative "../shown_duration"
require_relative "../findings/identity"
require_relative "../finding_kinds"
require_relative "../findings/store"
require_relative "../findings/reproduction"
require_relative "lone_check"

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
    # Checks run one at a time beside the workers (LoneCheck). A
    # suspect of a group with nothing on file comes first; one of a group on
    # file is checked only if it is smaller than the group's input (it would
    # replace it), at most SMALLER_CHECKS times a group. A suspect group
    # whose suspects finished alone FINISHED_CHECKS times (a slow loop that
    # ends) has its other suspects dropped unchecked, unless one was stopped
    # only at the threshold.
    class HangCheck < LoneCheck
      FINISHED_CHECKS = 3
      SMALLER_CHECKS = 3

      # What one check found: +outcome+ :hang, :finished, :other (another
      # finding) or :not_run; +identity+ that of the lone run's report;
      # +filed+ the Store#record outcome (:new, :smaller, :repeat) or nil.
      Result = Struct.new(:suspect, :outcome, :identity, :seconds, :filed, :detail, keyword_init: true)

      # Takes what LoneCheck takes.
      def initialize(**)
        super
        @suspects = @store.suspects
        @finished = Hash.new(0)
        @smaller = Hash.new(0)
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

      # Suspects of groups with nothing on file, waiting now.
      def waiting
        pending.count { |suspect| !on_file(suspect) }
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

      private

      def news(result) = HangCheck.news(result, @seconds)

      # What is left to check when the campaign ends: one suspect of each
      # group with nothing on file, the smallest (no hang goes unfiled
      # because the campaign ended).
      def last = pending.reject { |suspect| on_file(suspect) }.uniq(&:group)

      # The suspects worth a check, new groups first, smallest first; drops
      # those that are not.
      def pending
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
        output, status = run_alone(suspect.path)
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
      end

      # Files what the lone run of +suspect+ (+input+) found; its Result.
      def file(suspect, input, output, status)
        identity = Findings::Identity.of_report(output)
        if status.success?
          @finished[suspect.group] += 1
          millis = output[/^Executed .* in (\d+) ms$/, 1]
          return Result.new(suspect:, outcome: :finished, seconds: millis && (millis.to_i / 1000.0))
        end
        return not_run(suspect, output.lines.last(8).join) unless Findings::Reproduction.ran?(status)

        hang = Findings.hang?(identity.kind)
        seconds = hang ? ran_for(output) : nil
        report = @reproduction.filed_in(output, from: suspect.path, dir: @store.dir, group: identity.group)
        filed = @store.record(identity, input, report, seconds:, alone: "fails")
        @suspects.confirm(suspect.group, identity.group) if hang
        Result.new(suspect:, outcome: hang ? :hang : :other, identity:, seconds:, filed:)
      end

      def not_run(suspect, detail) = Result.new(suspect:, outcome: :not_run, detail:)

      # How long the lone run's input had run when libFuzzer's alarm ended
      # it (at least the threshold).
      def ran_for(output)
        alarm = output[/ALARM: working on the last Unit for (\d+) seconds/, 1]
        [alarm.to_i, @seconds].max
      end
    end
  end
end

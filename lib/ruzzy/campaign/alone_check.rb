# frozen_string_literal: true

require_relative "../error"
require_relative "../findings/identity"
require_relative "../finding_kinds"
require_relative "../findings/store"
require_relative "../findings/reproduction"
require_relative "../shown_path"
require_relative "display"
require_relative "lone_check"

module Ruzzy
  module Campaign
    # The supervisor's check that a group's input fails by itself. A worker
    # runs thousands of inputs in one process, so a target that keeps state
    # from one call to the next (a cache, a global, a memoised object) can
    # fail on an input only because of the inputs before it: that input is
    # no reproducer, and whoever replays it alone sees it pass. So each
    # group this campaign filed or shrank runs once alone, as `ruzzy
    # findings replay` runs it (-timeout at the hang threshold), and the
    # group records what it did (Store::Group#alone): "fails" as filed,
    # "passes", or "differs" (another finding, filed as the lone run names
    # it; a hang offered to HangCheck). A group that passes alone is said
    # so at once, in the summary and by `ruzzy findings`.
    #
    # Hangs are left to HangCheck (every hang on file ran over alone), and
    # internal errors are ruzzy's. Checks run one at a time beside the
    # workers (LoneCheck), the groups checked least first, at most CHECKS
    # times a group (an input that keeps shrinking is not run at each
    # step); a campaign that ends checks those not checked yet
    # (#check_last).
    class AloneCheck < LoneCheck
      CHECKS = 3

      # What one check found: +outcome+ one of Store::ALONE; +identity+
      # that of the lone run's finding when it differs, +filed+ the
      # Store#record outcome of that finding.
      Result = Struct.new(:group, :bytes, :outcome, :identity, :filed, keyword_init: true)

      # +before+: the findings count of each group before the campaign
      # (those it did not add to are not checked); the rest is what
      # LoneCheck takes.
      def initialize(before:, **checks)
        super(**checks)
        @before = before
        @checks = Hash.new(0)
      end

      # The line that says what +result+ found, or nil (its input fails
      # alone, as filed); +dir+ the findings directory as shown.
      def self.news(result, dir)
        case result.outcome
        when "passes"
          replay = "ruzzy findings #{dir} replay #{result.group}"
          "  #{result.group}: #{Display::ALONE_MARKS.fetch("passes")[1]} (#{replay})"
        when "differs"
          other = result.identity
          "  #{result.group}: its input met another finding when run by itself: #{other.group} " \
            "(#{other.kind}): #{other.title}"
        end
      end

      # At the campaign's end: checks the groups not checked yet (#finish)
      # and shows what was found.
      def check_last
        count = last.size
        @display.news("ruzzy: running the input of #{count} group(s) alone, once each") if count.positive?
        finish
        show
      end

      private

      def news(result) = AloneCheck.news(result, ShownPath.of(@store.dir))

      # What is left to check when the campaign ends: the groups never
      # checked.
      def last = pending.select { |group| @checks[group.name].zero? }

      # The groups to check: this campaign's, not checked since their input
      # became theirs, checked fewer than CHECKS times; least checked first.
      def pending
        @store.groups.select { |group| wanted?(group) }.sort_by { |group| [@checks[group.name], group.bytes.to_i] }
      end

      def wanted?(group)
        group.alone.nil? && group.findings > @before.fetch(group.name, 0) && @checks[group.name] < CHECKS &&
          !Findings.hang?(group.kind) && group.kind != Findings::GROUP_KINDS.fetch(:internal)
      end

      # Runs +group+'s input alone and records what it did. A run killed
      # because the campaign was interrupted records nothing.
      def check(group)
        @checks[group.name] += 1
        input = File.binread(group.input_path)
        output, status = run_alone(group.input_path)
        return if @interrupted || !Findings::Reproduction.ran?(status) || killed?(status)

        record(group, input, output, status)
      rescue SystemCallError, Error
        nil # the group stays unchecked: `ruzzy findings replay` says why
      end

      # Records what the lone run of +group+'s +input+ did.
      def record(group, input, output, status)
        identity = status.success? ? nil : Findings::Identity.of_report(output)
        outcome = if identity.nil? then "passes"
                  elsif identity.group == group.name then "fails"
                  else
                    "differs"
                  end
        return unless @store.note_alone(group.name, outcome, input.bytesize)

        filed = file_other(identity, input, output, group) if outcome == "differs"
        @results << Result.new(group: group.name, bytes: input.bytesize, outcome:, identity:, filed:)
      end

      # Files the other finding +identity+ that +group+'s +input+ met alone;
      # a hang is offered to HangCheck. The Store#record outcome, or nil.
      def file_other(identity, input, output, group)
        if Findings.hang?(identity.kind)
          @store.suspects.offer(identity.group, input, @seconds)
          return nil
        end

        report = @reproduction.filed_in(output, from: group.input_path, dir: @store.dir, group: identity.group)
        @store.record(identity, input, report, alone: "fails")
      end
    end
  end
end

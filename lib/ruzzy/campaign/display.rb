# frozen_string_literal: true

require_relative "../campaign_protocol"

module Ruzzy
  module Campaign
    # What a person watching a campaign sees: a status line (rewritten in
    # place on a terminal, printed every LINE_SECONDS otherwise), a line per
    # new finding group and per worker that a finding ended, and the
    # summary table at the end.
    class Display
      LINE_SECONDS = 10
      TERMINAL_SECONDS = 1
      # Seconds without an input finished after which the status line says
      # so (workers report their counts every few seconds).
      STALLED_SECONDS = 10
      # Why an input that failed in a worker passes when run by itself.
      PASSES_ALONE_CAUSE = "it fails only after other inputs ran in the same process (state kept from one " \
                           "call to the next) or only now and then"
      # What a group's input did when run by itself (Store::Group#alone):
      # the mark the table adds to its title, and what that means.
      ALONE_MARKS = {
        "fails" => [nil, "its input failed the same way when run by itself"],
        "passes" => ["[passes alone]", "its input passed when run by itself: #{PASSES_ALONE_CAUSE}"],
        "differs" => ["[alone: another bug]", "its input met another finding when run by itself, filed as such"]
      }.freeze

      def initialize(out)
        @out = out
        @terminal = out.respond_to?(:tty?) && out.tty?
        @started = monotonic
        @last_status = @started
        @status_shown = false
        @executions = 0
        @moved = @started
      end

      # Prints the status line if it is due.
      # +reached+: [lines, edges] of the user's code and lines in all, or nil.
      def status(executions:, exec_per_second:, coverage:, corpus:, groups:, findings:, reached: nil)
        now = monotonic
        @moved = now unless executions == @executions
        @executions = executions
        return unless now - @last_status >= (@terminal ? TERMINAL_SECONDS : LINE_SECONDS)

        @last_status = now
        reached = if reached
                    lines, edges, all_lines = reached.map { |number| thousands(number) }
                    "yours #{lines} lines #{edges} edges, all #{all_lines} lines  "
                  else
                    ""
                  end
        text = format("[%<time>s] %<executions>s execs (%<rate>s/s)  %<reached>scov %<coverage>d  corpus %<corpus>d  " \
                      "findings %<findings>d in %<groups>d group%<plural>s",
                      time: clock(now - @started), reached:, executions: thousands(executions),
                      rate: thousands(exec_per_second),
                      coverage:, corpus:, findings:, groups:, plural: groups == 1 ? "" : "s")
        stalled = (now - @moved).to_i
        text += "  (no input finished for #{stalled} s: a slow input or a hang)" if stalled >= STALLED_SECONDS
        if @terminal
          @out.write("\r#{text}\e[K")
          @status_shown = true
        else
          @out.puts text
        end
        @out.flush
      end

      # Prints a line of news above the status line.
      def news(text)
        @out.write("\r\e[K") if @status_shown
        @status_shown = false
        @out.puts text
        @out.flush
      end

      # The campaign's last numbers: +executions+ in +seconds+ by +started+
      # workers, +count+ at a time.
      def totals(executions, seconds, started, count)
        news("ruzzy: campaign: #{executions} executions in #{seconds.round} s " \
             "(#{(executions / [seconds, 1e-3].max).round}/s), #{started} worker(s), #{count} at a time")
      end

      # The table of +groups+ (Findings::Store::Group), +fresh+ naming those
      # first seen in this campaign, and how many +slow+ inputs the findings
      # directory +dir+ keeps (SLOW_UNITS).
      def summary(groups, fresh, dir, slow: 0)
        news("")
        if groups.empty?
          news("ruzzy: no findings")
        else
          news("ruzzy: #{groups.sum(&:findings)} finding(s) in #{groups.size} group(s), in #{dir}/:")
          Display.table(groups, fresh).each { |line| news(line) }
          news("  (* new in this run)  ruzzy findings #{dir} show GROUP | replay | minimise GROUP")
          Display.alone_notes(groups).each { |line| news(line) }
        end
        return unless slow.positive?

        news("ruzzy: #{slow} slow input(s) in #{dir}/#{SLOW_UNITS}/, not hangs (each finished within the " \
             "hang threshold): campaign.log says how long each ran")
      end

      # Says the campaign ended after +count+ workers in a row ended before
      # fuzzing started, the last one's +report+. +moved_from+ (the findings
      # directory) when each ended on an input of the corpus, moved aside in
      # turn: the cause may be an earlier input, which is said.
      def gave_up(count, report, moved_from: nil)
        moved = if moved_from
                  ", each on another input of the corpus, moved aside in turn. If they pass alone " \
                    "(ruzzy findings #{moved_from} replay), the target keeps state from one input to the " \
                    "next (an object shared across calls) that an earlier input left broken"
                end
        news("ruzzy: #{count} workers in a row ended before fuzzing started#{moved}; the last one printed:\n#{report}")
      end

      # The lines of a table of +groups+, those named in +fresh+ marked.
      def self.table(groups, fresh = [])
        header = format("  %-22<group>s %6<count>s %7<size>s  %<title>s", group: "GROUP", count: "COUNT",
                                                                          size: "BYTES", title: "WHAT")
        shared = { titles: repeated(groups.map(&:title)), sites: repeated(groups.filter_map(&:site)) }
        [header] + groups.map do |group|
          format("%<marker>s %-22<group>s %6<count>d %7<size>d  %<title>s",
                 marker: fresh.include?(group.name) ? "*" : " ", group: group.name, count: group.findings,
                 size: group.bytes.to_i, title: title(group, shared))
        end
      end

      # The lines that say what each mark of ALONE_MARKS the table of
      # +groups+ shows means.
      def self.alone_notes(groups)
        ALONE_MARKS.filter_map do |alone, (mark, meaning)|
          "  #{mark}: #{meaning}" if mark && groups.any? { |group| group.alone == alone }
        end
      end

      # +group+'s title (followed by where it was raised when another group
      # shown reads the same or was raised there too (+shared+: such
      # :titles and :sites): two bugs with one message then show two
      # sites, and one bug split in two (one line raising TypeError for one
      # input and NoMethodError for another) shows one site twice. A group
      # filed before sites were kept, or of a kind whose title names its
      # frames, has no site and shows its title), then its mark of
      # ALONE_MARKS if it has one.
      def self.title(group, shared)
        sited = group.site && (shared[:titles].include?(group.title) || shared[:sites].include?(group.site))
        title = sited ? "#{group.title} (at #{group.site})" : group.title
        [title, ALONE_MARKS.dig(group.alone, 0)].compact.join(" ")
      end

      # The values that occur more than once in +values+.
      def self.repeated(values) = values.tally.select { |_, count| count > 1 }.keys

      private

      def monotonic
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      def clock(seconds)
        seconds = seconds.to_i
        format("%<hours>02d:%<minutes>02d:%<seconds>02d", hours: seconds / 3600, minutes: seconds / 60 % 60,
                                                          seconds: seconds % 60)
      end

      def thousands(number)
        number.to_i.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
      end
    end
  end
end

# frozen_string_literal: true

require "shellwords"
require "tmpdir"
require_relative "../command_options"
require_relative "../exit_status"
require_relative "../findings/store"
require_relative "../finding_kinds"
require_relative "../findings/reproduction"
require_relative "../findings/minimiser"
require_relative "../campaign/display"
require_relative "../libfuzzer_args"
require_relative "../shown_duration"

module Ruzzy
  module Findings
    # `ruzzy findings [DIR] [show GROUP | replay [GROUP...] | minimise GROUP]`:
    # what a campaign (`ruzzy --keep-going`) found, one group per bug.
    class Command
      USAGE = <<~TEXT.freeze
        Usage: ruzzy findings [DIR]                  list the groups
               ruzzy findings [DIR] show GROUP       the report and the commands that reproduce it
               ruzzy findings [DIR] replay [GROUP...]
                                                    run each group's input again (all by default)
               ruzzy findings [DIR] minimise GROUP [-runs=N] [-max_total_time=N] [-seed=N]
                                                    shrink the group's input to the smallest that
                                                    fails the same way (rounds of libFuzzer's
                                                    minimising step; others met are filed)

        DIR is a campaign's findings directory (default ruzzy-findings); GROUP is
        a group's name or the start of one. Inputs run as the campaign ran them:
        its command, directory and environment (campaign.json). replay exits
        #{EXIT_FINDING} when any input still fails, #{EXIT_OK} when none does, #{EXIT_HARNESS_ERROR} when the harness
        did not run (it could not load), so an input was not tried.
      TEXT
      VERBS = %w[list show replay minimise minimize].freeze
      # -timeout for minimising a timeout when campaign.json records no hang
      # threshold: long enough to tell a hang from a slow input, short
      # enough for the hundreds of runs minimising takes.
      MINIMISE_TIMEOUT = 5
      # A filed report's own Reproduce and Minimise lines: show prints them
      # once, below the report, for where the findings directory is now.
      FILED_COMMAND_LINES = /^==ruzzy== (?:Reproduce|Minimise): .*\n/

      def initialize(argv, out:, err:)
        @argv = argv.dup
        @out = out
        @err = err
      end

      def run
        return EXIT_OK if CommandOptions.parse!(CommandOptions.parser("ruzzy findings"), @argv, out: @out,
                                                                                                usage: USAGE,
                                                                                                in_order: true)

        dir = VERBS.include?(@argv.first) || @argv.empty? ? CLI::DEFAULT_FINDINGS_DIR : @argv.shift
        raise CLI::UsageError, "ruzzy findings: no findings directory #{dir}" unless File.directory?(dir)

        @store = Store.new(dir)
        verb = @argv.shift || "list"
        case verb
        when "list" then list
        when "show" then show(group!(@argv.shift))
        when "replay" then replay(@argv.empty? ? @store.groups : @argv.map { |name| group!(name) })
        when "minimise", "minimize" then minimise(group!(@argv.shift), @argv)
        else raise CLI::UsageError, "ruzzy findings: unknown command #{verb.inspect} (list, show, replay, minimise)"
        end
      end

      private

      def list
        groups = @store.groups
        if groups.empty?
          @out.puts "no findings in #{@store.dir}"
        else
          [*Campaign::Display.table(groups), *Campaign::Display.alone_notes(groups)].each { |line| @out.puts line }
        end
        EXIT_OK
      end

      def show(group)
        @out.puts "#{group.name}: #{group.title}"
        @out.puts "#{group.findings} finding(s) from #{group.first_seen} to #{group.last_seen}; " \
                  "smallest input #{group.bytes} bytes"
        alone = Campaign::Display::ALONE_MARKS.dig(group.alone, 1)
        @out.puts "#{alone.sub(/\A./, &:upcase)}." if alone
        @out.puts "", File.read(group.report_path).scrub.gsub(FILED_COMMAND_LINES, ""), ""
        @out.puts "Reproduce: #{reproduction.shell_line(group.input_path)}"
        @out.puts "Minimise:  #{Reproduction.minimise_line(@store.dir, group.name)}"
        EXIT_OK
      end

      def replay(groups)
        outcomes = groups.map do |group|
          output, status = run_input(group.input_path, ["-timeout=#{hang_seconds}"])
          outcome, verdict = verdict(group, output, status)
          @out.puts format("%-10<outcome>s %-22<group>s %<verdict>s", outcome:, group: group.name, verdict:)
          outcome
        end
        failing = outcomes.count("FAILS")
        not_run = outcomes.count("NOT RUN")
        @out.puts "#{failing} of #{groups.size} group(s) still fail" \
                  "#{"; #{not_run} not run (the harness did not run)" if not_run.positive?}"
        return not_run_error("the input of #{not_run} group(s)") if not_run.positive?

        failing.positive? ? EXIT_FINDING : EXIT_OK
      end

      # The outcome (ok, FAILS, NOT RUN) and verdict of +group+'s input,
      # whose run printed +output+ and ended with +status+.
      def verdict(group, output, status)
        return ["ok", passes(group, output)] if status.success?
        return ["NOT RUN", "the harness did not run (exit #{status.exitstatus}):\n#{indented(output)}"] \
          unless Reproduction.ran?(status)

        identity = Identity.of_report(output)
        if identity.group == group.name
          return ["FAILS", Findings.hang?(group.kind) ? "hangs: #{hang_time(output)}" : "reproduced"]
        end

        ["FAILS", "fails differently: #{identity.group} #{identity.title}#{excerpt(identity, output)}"]
      end

      # A run whose harness did not run says nothing about the bugs: most
      # likely what it loads is no longer where the campaign found it.
      # +output+: what it printed, when not shown yet.
      def not_run_error(what, output = nil)
        @err.puts "ruzzy findings: the harness did not run, so #{what} was not tried" \
                  "#{"; it printed:\n#{indented(output).chomp}" if output}"
        @err.puts "ruzzy findings: it runs as #{File.join(@store.dir, Store::CAMPAIGN)} records: " \
                  "#{reproduction.shell_line}"
        EXIT_HARNESS_ERROR
      end

      def indented(output)
        output.lines.reject { |line| line.start_with?("INFO: ") }.first(8).map { |line| "    #{line}" }.join
      end

      # Shrinks +group+'s input (Minimiser) once a run shows that it still
      # fails the same way; +argv+: libFuzzer's flags (Minimiser.options).
      def minimise(group, argv)
        options = minimise_options(group, argv)
        # Its time budget counts from here, the first run of the input included.
        minimiser = Minimiser.new(store: @store, group:, reproduction:, hang_seconds:, **options)
        @out.puts "minimising #{group.name} (#{group.bytes} bytes)..."
        output, status = run_input(group.input_path, options[:flags])
        return not_run_error("#{group.name}'s input", output) unless Reproduction.ran?(status, output)

        identity = !status.success? && Identity.of_report(output)
        return nothing_to_minimise(group, identity) unless identity && identity.group == group.name

        shown = []
        outcome = minimiser.run do |other|
          @out.puts "met another bug: #{other}" unless other.outcome == :repeat && shown.include?(other.identity.group)
          shown << other.identity.group
        end
        minimised(group, outcome)
      end

      # Minimiser.options of +argv+, minimise_timeout first (a -timeout in
      # +argv+ comes later, and wins).
      def minimise_options(group, argv)
        options = Minimiser.options(argv)
        options.merge(flags: ["-timeout=#{minimise_timeout(group)}", *options[:flags]])
      rescue ArgumentError => e
        raise CLI::UsageError, "ruzzy findings: minimise: #{e.message}"
      end

      # -timeout for minimising +group+: a hang's is the campaign's hang
      # threshold (hang_seconds), or MINIMISE_TIMEOUT when campaign.json
      # records none; any other group's is the threshold, as for replay.
      def minimise_timeout(group)
        Findings.hang?(group.kind) && !campaign["hang_seconds"] ? MINIMISE_TIMEOUT : hang_seconds
      end

      # Says how far +group+'s input shrank and why minimising stopped (or
      # what failed).
      def minimised(group, outcome)
        now = @store.find(group.name)&.bytes || group.bytes
        shrunk = "#{group.bytes} -> #{now} bytes (#{group.input_path})"
        @out.puts "#{group.name}: #{now < group.bytes ? shrunk : "kept the #{now}-byte input"}"
        return minimise_failed(outcome.failure) if outcome.failure

        @out.puts "stopped: #{outcome.stop}"
        EXIT_OK
      end

      # +group+'s input passes now (+identity+ false) or fails as another
      # group (+identity+).
      def nothing_to_minimise(group, identity)
        how = if identity then "now fails differently (#{identity.group} #{identity.title})"
              else
                "no longer fails (ruzzy findings #{Shellwords.escape(@store.dir)} replay #{group.name} " \
                  "says how it runs now)"
              end
        @out.puts "#{group.name}: its input #{how}; nothing to minimise"
        EXIT_OK
      end

      def minimise_failed(output)
        @err.puts "ruzzy findings: minimising stopped: a round failed without an input; it printed:\n" \
                  "#{output.lines.last(20).join}"
        EXIT_HARNESS_ERROR
      end

      # Runs the campaign's harness on +input+ with +flags+ as the campaign
      # ran it; returns its output (standard error and output) and status.
      def run_input(input, flags)
        reproduction.run(*flags, File.expand_path(input))
      end

      # The first lines of +output+ when it holds no report (the harness did
      # not even run).
      def excerpt(identity, output)
        identity.kind == GROUP_KINDS.fetch(:crash) ? "\n#{output.lines.first(8).join}" : ""
      end

      # The campaign's hang threshold in seconds: what a hang is when its
      # inputs are replayed and minimised (campaign.json's "hang_seconds";
      # of a campaign that did not record it, its -timeout or ruzzy's).
      def hang_seconds
        (campaign["hang_seconds"] || campaign["timeout"] || LibFuzzerArgs::RUZZY_DEFAULT_TIMEOUT).to_f.ceil.clamp(1..)
      end

      # "passes now", with how long the input ran now when the group was
      # a hang (and how long it ran when it was filed, if measured).
      def passes(group, output)
        if group.alone == "passes"
          return "passes now, as it did alone in the campaign: #{Campaign::Display::PASSES_ALONE_CAUSE}"
        end
        return "passes now" unless Findings.hang?(group.kind)

        millis = output[/^Executed .* in (\d+) ms$/, 1]
        now = millis ? "now #{ShownDuration.of(millis.to_i / 1000.0)}" : "passes now"
        was = group.seconds ? "was over #{group.seconds} s" : "was a hang"
        "#{now} (#{was}; the hang threshold is #{hang_seconds} s)"
      end

      # How long a hang's input ran before libFuzzer's alarm, against the
      # threshold.
      def hang_time(output)
        alarm = output[/ALARM: working on the last Unit for (\d+) seconds/, 1]
        "ran #{alarm ? "#{alarm} s" : "past the threshold"} (the hang threshold is #{hang_seconds} s)"
      end

      def reproduction
        @reproduction ||= Reproduction.from_campaign(campaign)
      end

      def campaign
        @store.campaign or raise CLI::UsageError, "ruzzy findings: #{@store.dir} has no campaign.json " \
                                                  "(it is written by ruzzy --keep-going)"
      end

      def group!(name)
        raise CLI::UsageError, "ruzzy findings: name a group (ruzzy findings #{@store.dir} lists them)" unless name

        @store.find(name) or raise CLI::UsageError, no_group(name)
      end

      # Why +name+ names no group: no group's name starts with it, or
      # several do (Store#find will not guess), listed as `list` shows
      # them so that one can be named.
      def no_group(name)
        matches = @store.groups.select { |group| group.name.start_with?(name) }
        return "ruzzy findings: no group #{name.inspect} in #{@store.dir}" if matches.size < 2

        "ruzzy findings: #{matches.size} groups in #{@store.dir} start with #{name.inspect}; name one:\n" +
          Campaign::Display.table(matches).join("\n")
      end
    end
  end
end

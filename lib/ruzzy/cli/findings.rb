# frozen_string_literal: true

require "shellwords"
require "tmpdir"
require_relative "command_options"
require_relative "../exit_status"
require_relative "../findings/store"
require_relative "../findings/kinds"
require_relative "../findings/reproduction"
require_relative "../campaign/display"

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
               ruzzy findings [DIR] minimise GROUP [-runs=N]
                                                    shrink the group's input (libFuzzer's -minimize_crash)

        DIR is a campaign's findings directory (default ruzzy-findings); GROUP is
        a group's name or the start of one. Inputs run as the campaign ran them:
        its command, directory and environment (campaign.json). replay exits
        #{EXIT_FINDING} when any input still fails, #{EXIT_OK} when none does, #{EXIT_HARNESS_ERROR} when the harness
        did not run (it could not load), so an input was not tried.
      TEXT
      VERBS = %w[list show replay minimise minimize].freeze
      # -timeout for minimising a timeout: long enough to tell a hang from a
      # slow input, short enough for the hundreds of runs minimising takes.
      MINIMISE_TIMEOUT = 5

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
          Campaign::Display.table(groups).each { |line| @out.puts line }
        end
        EXIT_OK
      end

      def show(group)
        @out.puts "#{group.name}: #{group.title}"
        @out.puts "#{group.findings} finding(s) from #{group.first_seen} to #{group.last_seen}; " \
                  "smallest input #{group.bytes} bytes"
        @out.puts "", File.read(group.report_path).scrub, ""
        @out.puts "Reproduce: #{reproduction.shell_line(group.input_path)}"
        @out.puts "Minimise:  #{Reproduction.minimise_line(@store.dir, group.name)}"
        EXIT_OK
      end

      def replay(groups)
        outcomes = groups.map do |group|
          output, status = run_input(group.input_path, timeout_flag)
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
        return ["ok", "passes now"] if status.success?
        return ["NOT RUN", "the harness did not run (exit #{status.exitstatus}):\n#{indented(output)}"] \
          unless Reproduction.ran?(status)

        identity = Identity.of_report(output)
        return %w[FAILS reproduced] if identity.group == group.name

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

      def minimise(group, flags)
        flags = ["-runs=10000", *flags] unless flags.any? { |flag| flag.start_with?("-runs=") }
        flags += ["-timeout=#{MINIMISE_TIMEOUT}"] if Findings.hang?(group.kind)
        Dir.mktmpdir("ruzzy-minimise") do |tmp|
          smaller = File.join(tmp, "minimised")
          @out.puts "minimising #{group.name} (#{group.bytes} bytes)..."
          output, status = run_input(group.input_path, ["-minimize_crash=1", "-exact_artifact_path=#{smaller}", *flags])
          return not_run_error("#{group.name}'s input", output) unless Reproduction.ran?(status, output)
          return no_longer_fails(group) if Reproduction::NO_LONGER_FAILS.match?(output)
          return minimise_failed(output) unless File.file?(smaller)

          keep_if_same(group, File.binread(smaller))
        end
      end

      # Keeps +input+ as +group+'s input if it still fails the same way.
      def keep_if_same(group, input)
        output, status = Dir.mktmpdir("ruzzy-check") do |tmp|
          File.binwrite(File.join(tmp, "input"), input)
          output, status = run_input(File.join(tmp, "input"), [])
          [reproduction.filed_report(output, from: File.join(tmp, "input"), to: group.input_path,
                                             minimise: Reproduction.minimise_line(@store.dir, group.name)), status]
        end
        identity = Identity.of_report(output)
        if !status.success? && identity.group == group.name && @store.offer_smaller(identity, input, output)
          @out.puts "#{group.name}: #{group.bytes} -> #{input.bytesize} bytes (#{group.input_path})"
        else
          @out.puts "#{group.name}: kept the #{group.bytes}-byte input (nothing smaller fails the same way)"
        end
        EXIT_OK
      end

      def no_longer_fails(group)
        @out.puts "#{group.name}: its input no longer fails (ruzzy findings #{Shellwords.escape(@store.dir)} " \
                  "replay #{group.name} says how it runs now); nothing to minimise"
        EXIT_OK
      end

      def minimise_failed(output)
        @err.puts "ruzzy findings: minimising produced no input; libFuzzer printed:\n#{output.lines.last(20).join}"
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
        identity.kind == "crash" ? "\n#{output.lines.first(8).join}" : ""
      end

      # The campaign's -timeout, if it had one.
      def timeout_flag
        campaign["timeout"] ? ["-timeout=#{campaign["timeout"]}"] : []
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

        @store.find(name) or raise CLI::UsageError, "ruzzy findings: no group #{name.inspect} in #{@store.dir}"
      end
    end
  end
end

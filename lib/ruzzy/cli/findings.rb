# frozen_string_literal: true

require "open3"
require "shellwords"
require "tmpdir"
require_relative "command_options"
require_relative "../exit_status"
require_relative "../findings/store"
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
        a group's name or the start of one. replay exits #{EXIT_FINDING} when any input
        still fails, #{EXIT_OK} when none does.
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
        @out.puts "Reproduce: #{Shellwords.join([*command, group.input_path])}"
        @out.puts "Minimise:  ruzzy findings #{Shellwords.escape(@store.dir)} minimise #{group.name}"
        EXIT_OK
      end

      def replay(groups)
        failing = groups.count do |group|
          output, status = run_input(group.input_path, timeout_flag)
          identity = Identity.of_report(output)
          verdict = if status.success? then "passes now"
                    elsif identity.group == group.name then "reproduced"
                    else
                      "fails differently: #{identity.group} #{identity.title}#{excerpt(identity, output)}"
                    end
          @out.puts format("%-10<outcome>s %-22<group>s %<verdict>s", outcome: status.success? ? "ok" : "FAILS",
                                                                      group: group.name, verdict:)
          !status.success?
        end
        @out.puts "#{failing} of #{groups.size} group(s) still fail"
        failing.positive? ? EXIT_FINDING : EXIT_OK
      end

      def minimise(group, flags)
        flags = ["-runs=10000", *flags] unless flags.any? { |flag| flag.start_with?("-runs=") }
        flags += ["-timeout=#{MINIMISE_TIMEOUT}"] if group.kind == "timeout"
        Dir.mktmpdir("ruzzy-minimise") do |tmp|
          smaller = File.join(tmp, "minimised")
          @out.puts "minimising #{group.name} (#{group.bytes} bytes)..."
          output, = run_input(group.input_path, ["-minimize_crash=1", "-exact_artifact_path=#{smaller}", *flags])
          return minimise_failed(output) unless File.file?(smaller)

          keep_if_same(group, File.binread(smaller))
        end
      end

      # Keeps +input+ as +group+'s input if it still fails the same way.
      def keep_if_same(group, input)
        output, status = Dir.mktmpdir("ruzzy-check") do |tmp|
          File.binwrite(File.join(tmp, "input"), input)
          run_input(File.join(tmp, "input"), [])
        end
        identity = Identity.of_report(output)
        if !status.success? && identity.group == group.name && @store.offer_smaller(identity, input, output)
          @out.puts "#{group.name}: #{group.bytes} -> #{input.bytesize} bytes (#{group.input_path})"
        else
          @out.puts "#{group.name}: kept the #{group.bytes}-byte input (nothing smaller fails the same way)"
        end
        EXIT_OK
      end

      def minimise_failed(output)
        @err.puts "ruzzy findings: minimising produced no input; libFuzzer printed:\n#{output.lines.last(20).join}"
        EXIT_HARNESS_ERROR
      end

      # Runs the campaign's harness on +input+ with +flags+; returns its
      # output (standard error and output) and status.
      def run_input(input, flags)
        environment = campaign.fetch("environment", {}).merge(Campaign::ENV_FINDINGS_DIR => nil)
        Open3.capture2e(environment, *command, *flags, File.expand_path(input),
                        chdir: campaign.fetch("directory", Dir.pwd))
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

      def command
        campaign.fetch("command")
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

# frozen_string_literal: true

require "open3"
require "shellwords"
require_relative "../exit_status"
require_relative "../finding_kinds"
require_relative "store"
require_relative "../settings"
require_relative "../campaign_protocol"
require_relative "../error"

module Ruzzy
  module Findings
    # What runs a campaign's harness again the way the campaign ran it: the
    # command (Ruby with its own options, the ruzzy program with its options,
    # the harness), the working directory, and the environment variables
    # that decide where Ruby, the gems and native libraries are found
    # (ENVIRONMENT). campaign.json records them; `ruzzy findings` replays
    # and minimises with them, and prints them as one shell line that
    # works as printed in a new shell.
    #
    # The supervisor records its own environment: the user's, since a
    # campaign's supervisor is never re-executed with ruzzy's preloads
    # (`--sanitizer`, `--engine=libafl` are in the command, and add their
    # preloads again by the same route when it runs).
    class Reproduction
      # The variables recorded, set or not: one that was not set in the
      # campaign is unset for a replay. Where Ruby, the gems and native
      # libraries are found; what the sanitizers do; and ruzzy's own
      # settings that change what a run finds (the engine, the detectors,
      # the comparison hooks, the dictionary, coverage locations); the
      # environment a web app is loaded in (`ruzzy rack`).
      ENVIRONMENT = (%w[
        GEM_HOME GEM_PATH RUBYLIB RUBYOPT BUNDLE_GEMFILE LD_PRELOAD LD_LIBRARY_PATH
        ASAN_OPTIONS UBSAN_OPTIONS RACK_ENV APP_ENV RAILS_ENV
      ] + Settings::ALL).freeze
      # libFuzzer's words when -minimize_crash is given an input that no
      # longer fails: it ran, and exited 1.
      NO_LONGER_FAILS = /^ERROR: the input \S+ did not crash$/

      # Exit statuses of a run that met a finding; any other than 0 means
      # the input never ran (the harness could not load, ruzzy or Ruby
      # could not start).
      FINDING_STATUSES = KINDS.values.filter_map(&:exit_status).uniq.freeze

      attr_reader :command, :directory, :environment

      # +command+ as this process would run it: in its directory, with its
      # environment.
      def self.current(command)
        new(command, Dir.pwd, ENVIRONMENT.to_h { |name| [name, ENV.fetch(name, nil)] })
      end

      # What campaign.json's +settings+ say (a campaign.json written before
      # every variable of ENVIRONMENT was recorded leaves the others as
      # they are).
      def self.from_campaign(settings)
        new(settings.fetch("command"), settings.fetch("directory", Dir.pwd), settings.fetch("environment", nil) || {})
      end

      # The command that minimises +group+ of the findings directory +dir+.
      def self.minimise_line(dir, group)
        "ruzzy findings #{Shellwords.escape(dir)} minimise #{Shellwords.escape(group)}"
      end

      # Whether a run that ended with +status+ (a Process::Status) and
      # printed +output+ ran its input: it passed, met a finding (a signal
      # included), or was minimising an input that no longer fails.
      def self.ran?(status, output = "")
        status.exitstatus.nil? || status.success? || FINDING_STATUSES.include?(status.exitstatus) ||
          NO_LONGER_FAILS.match?(output)
      end

      def initialize(command, directory, environment)
        @command = command
        @directory = directory
        @environment = environment
      end

      # The settings campaign.json keeps.
      def to_campaign
        { "command" => command, "directory" => directory, "environment" => environment }
      end

      # Runs the command with +args+ (libFuzzer's flags and the input) in
      # the recorded directory and environment, as a plain run (not a
      # campaign's worker); returns its output (standard error and output)
      # and its Process::Status. With +limit+ (seconds), a run still going
      # then is killed (a harness that hangs before its first input, which
      # no -timeout ends). The block, if given, gets the process's pid
      # first (to kill it sooner). Raises ReproductionError when the
      # directory or the command is gone (the commands report it as a
      # usage error).
      def run(*args, limit: nil)
        unless File.directory?(directory)
          raise ReproductionError, "the campaign ran in #{directory}, which no longer exists " \
                                   "(campaign.json's \"directory\" says where to run the harness)"
        end

        env = environment.merge(Campaign::ENV_FINDINGS_DIR => nil)
        Open3.popen2e(env, *command, *args, chdir: directory) do |stdin, output, process|
          stdin.close
          yield process.pid if block_given?
          reader = Thread.new { output.read }
          Reproduction.kill(process.pid) unless process.join(limit)
          [reader.value, process.value]
        end
      rescue SystemCallError => e
        raise ReproductionError, "the campaign's command cannot run: #{e.message} (#{command.first})"
      end

      # Ends the run of pid +pid+ (#run's), if it still runs.
      def self.kill(pid)
        Process.kill("KILL", pid)
      rescue SystemCallError
        nil
      end

      # The command with +args+ as one shell line: `cd DIR && env NAME=VALUE
      # ... COMMAND ARGS`. A variable the campaign ran without that is set
      # in +current+ (the environment of the shell the line is printed for)
      # is unset with `env -u NAME`.
      def shell_line(*args, current: ENV)
        set = environment.compact.map { |name, value| "#{name}=#{Shellwords.escape(value)}" }
        unset = environment.filter_map { |name, value| "-u #{name}" if value.nil? && current.key?(name) }
        env = set.empty? && unset.empty? ? [] : ["env", *unset, *set]
        "cd #{Shellwords.escape(directory)} && #{[*env, Shellwords.join([*command, *args])].join(" ")}"
      end

      # The lines a run prints before it runs its input: ruzzy's and
      # libFuzzer's INFO lines, the dictionary's size, and libFuzzer's
      # "Running" lines for the files given.
      START_UP = /\A(?:INFO: |Dictionary: \d+ entries$|.*: Running \d+ inputs \d+ time\(s\) each\.$|Running: )/

      # +report+, printed by a run on the input file +from+, as the report
      # filed with +group+ of the findings directory +dir+ (#filed_report).
      def filed_in(report, from:, dir:, group:)
        filed_report(report, from:, to: File.join(dir, group, Store::INPUT),
                             minimise: Reproduction.minimise_line(dir, group))
      end

      # +report+, printed by a run on the input file +from+, as the report
      # of a group whose input is now +to+: the file named as +to+, libFuzzer's
      # `artifact_prefix='DIR/'` naming +to+'s directory when it named
      # +from+'s (a worker's artifacts directory, deleted once filed), and
      # the Reproduce and Minimise lines the group's (+minimise+ the command
      # that minimises the group). A run of the input alone (a hang's check,
      # a minimising round) prints its start-up first: those lines are left
      # out, as a finding filed by the process that met it has none.
      def filed_report(report, from:, to:, minimise:)
        report.lines.drop_while { |line| line.match?(START_UP) }.join
              .gsub(from) { to }.gsub(Shellwords.escape(from)) { to }
              .gsub("artifact_prefix='#{File.dirname(from)}/'") { "artifact_prefix='#{File.dirname(to)}/'" }
              .gsub(/^==ruzzy== Reproduce: .*$/) { "==ruzzy== Reproduce: #{shell_line(to)}" }
              .gsub(/^==ruzzy== Minimise: .*$/) { "==ruzzy== Minimise:  #{minimise}" }
      end
    end
  end
end

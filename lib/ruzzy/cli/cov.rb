# frozen_string_literal: true

require "open3"
require "rbconfig"
require "tmpdir"
require "fileutils"
require_relative "command_options"
require_relative "../own_files"
require_relative "cov/report"

module Ruzzy
  # `ruzzy cov HARNESS.rb CORPUS... [-o DIR]`: what did the fuzzer reach?
  #
  # Replays every input of the corpus directories (and files) through the
  # harness's target under Ruby's own line and branch coverage (independent
  # of ruzzy's fuzzing hooks), in child processes: an input that kills the
  # process (a C extension crash) is reported and the replay goes on with
  # the next input in a new process. Writes an HTML report, lcov.info and a
  # SimpleCov-compatible .resultset.json into DIR, and prints a summary.
  module Cov
    USAGE = <<~TEXT
      Usage: ruzzy cov [-I DIR]... [--include=PATTERN]... [--exclude=PATTERN]...
                       [-o REPORT_DIR] HARNESS.rb CORPUS_DIR_OR_FILE...

      Replays the corpus under Ruby's coverage and writes REPORT_DIR
      (default coverage-report/): index.html, lcov.info, .resultset.json.
      Patterns as for fuzzing: "/prefix" or a substring of the path.
    TEXT

    # The outcome of a replay.
    Replay = Struct.new(:inputs, :coverage, :first_hits, :raised, :crashed, keyword_init: true)

    # The parent side: parses the command line, runs the children, writes.
    class Command
      # The child process's script (it loads the harness and replays).
      REPLAY_SCRIPT = File.expand_path("cov/replay.rb", __dir__)

      def initialize(argv, out:, err:)
        @argv = argv.dup
        @out = out
        @err = err
        @output = "coverage-report"
        @patterns = { include: [], exclude: [] }
        @load_path = []
      end

      def run
        harness, sources = parse
        return 0 unless harness

        inputs = corpus_files(sources)
        replay = replay_all(harness, inputs)
        report = Report.new(replay, filter_description)
        report.write(@output)
        @out.puts report.summary(@output)
        0
      end

      private

      def parse
        parser = CommandOptions.parser("ruzzy cov")
        parser.on("-o REPORT_DIR") { |dir| @output = dir }
        CommandOptions.coverage_patterns(parser, @patterns)
        CommandOptions.load_path(parser) { |dir| @load_path << dir }
        return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE)

        harness, *sources = @argv
        raise CLI::UsageError, "ruzzy cov needs a harness and at least one corpus" if sources.empty?
        raise CLI::UsageError, "ruzzy cov: no such harness file: #{harness}" unless File.file?(harness)

        [harness, sources]
      end

      def corpus_files(sources)
        sources.flat_map do |source|
          raise CLI::UsageError, "ruzzy cov: no such corpus: #{source}" unless File.exist?(source)

          File.directory?(source) ? Dir.glob(File.join(source, "**", "*")).select { |p| File.file?(p) }.sort : [source]
        end
      end

      def filter_description
        @patterns
      end

      # Replays +inputs+ in as many child processes as crashes require.
      def replay_all(harness, inputs)
        replay = Replay.new(inputs:, coverage: {}, first_hits: {}, raised: {}, crashed: [])
        pending = inputs.each_with_index.map { |path, index| [index, path] }
        Dir.mktmpdir("ruzzy-cov") do |work|
          until pending.empty?
            done = run_child(harness, pending, work, replay)
            pending = pending.reject { |pair| done.include?(pair.first) }
          end
        end
        replay
      end

      # Runs one child over +pending+; returns the indices it finished (or
      # that killed it).
      def run_child(harness, pending, work, replay)
        list = File.join(work, "inputs")
        status = File.join(work, "status")
        dump = File.join(work, "dump")
        FileUtils.rm_f([status, dump])
        File.write(list, pending.map { |index, path| "#{index}\t#{path}\n" }.join)
        command = [RbConfig.ruby, "-I#{LIB_DIR}", *@load_path.map { |dir| "-I#{dir}" }, REPLAY_SCRIPT, harness, list,
                   status, dump, JSON.generate(filter_description)]
        _, errors, process = Open3.capture3(*command)
        finished = absorb(status, dump, replay, pending)
        return finished if process.success? || finished.size == pending.size

        finished << crashed(status, pending, finished, errors, replay)
      end

      # Records the input that killed a child; returns its index.
      def crashed(status, pending, finished, errors, replay)
        crasher = started_not_finished(status) || pending.find { |index, _| !finished.include?(index) }&.first
        raise CLI::UsageError, "ruzzy cov: the replay failed before any input:\n#{errors}" if crasher.nil?

        replay.crashed << [replay.inputs[crasher], errors.lines.last(3).join.strip]
        crasher
      end

      def absorb(status, dump, replay, pending)
        lines = File.exist?(status) ? File.readlines(status, chomp: true) : []
        finished = []
        lines.grep(/\ADONE /).each do |line|
          _, index, outcome, klass = line.split(" ", 4)
          finished << Integer(index)
          replay.raised[replay.inputs[Integer(index)]] = klass if outcome == "raised"
        end
        merge(replay, Marshal.load(File.binread(dump))) if File.exist?(dump) # rubocop:disable Security/MarshalLoad -- our own child's dump
        finished & pending.map(&:first)
      end

      def started_not_finished(status)
        return nil unless File.exist?(status)

        lines = File.readlines(status, chomp: true)
        last = lines.grep(/\ASTART /).last
        last && !lines.include?("DONE #{last.split.last}") ? Integer(last.split.last) : nil
      end

      def merge(replay, data)
        data[:coverage].each do |path, result|
          Report.add_counts(replay.coverage[path] ||= { lines: [], branches: {} }, result)
        end
        data[:first].each do |path, lines|
          target = replay.first_hits[path] ||= {}
          lines.each { |line, index| target[line] = [target[line], index].compact.min }
        end
      end
    end
  end
end

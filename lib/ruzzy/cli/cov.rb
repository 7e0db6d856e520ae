# frozen_string_literal: true

require "json"
require "open3"
require "rbconfig"
require "tmpdir"
require "fileutils"
require_relative "../command_options"
require_relative "../own_files"
require_relative "../exit_status"
require_relative "../sanitizers"
require_relative "../findings/store"
require_relative "cov/report"
require_relative "cov/native_coverage"
require_relative "cov/progress_plot"
require_relative "../error"

module Ruzzy
  # `ruzzy cov HARNESS.rb CORPUS... [-o DIR]`: what did the fuzzer reach?
  #
  # Replays every input of the corpus directories (and files) through the
  # harness's target under Ruby's own line and branch coverage (independent
  # of ruzzy's fuzzing hooks), in child processes: an input that kills the
  # process (a C extension crash) is reported and the replay goes on with
  # the next input in a new process. Writes an HTML report, lcov.info and a
  # SimpleCov-compatible .resultset.json into DIR (and raised.txt, the
  # inputs that raised and their exceptions), and prints a summary.
  module Cov
    USAGE = <<~TEXT.freeze
      Usage: ruzzy cov [-I DIR]... [--include=PATTERN]... [--exclude=PATTERN]... [--all]
                       [--sanitizer=NAME] [--campaign=FINDINGS_DIR] [-o REPORT_DIR]
                       HARNESS.rb CORPUS_DIR_OR_FILE...
             ruzzy cov [OPTIONS] [--session=N] rack APP CORPUS_DIR_OR_FILE...   (as `ruzzy rack APP`)

      Replays the corpus under Ruby's coverage and writes REPORT_DIR
      (default coverage-report/): index.html, lcov.info, .resultset.json,
      and raised.txt when inputs raised (each with its exception; the
      summary names a few).
      The report shows your code: the files under the harness's directory,
      and the files of each library the harness requires directly (the
      whole gem, installed or not; for a library outside a gem directory,
      the required file, its same-named directory and the files its
      installed gemspec lists), but not what those libraries load in turn.
      --include=PATTERN names the files to show instead ("/prefix" or a
      substring of the path, as for fuzzing); --all shows every file.
      A C extension built with a sanitizer is replayed with that sanitizer
      preloaded (--sanitizer=NAME, or found out when the extension will not
      load without it). A campaign's coverage over time is plotted from
      its findings directory: --campaign=DIR, or else the findings
      directory a corpus lies in (ruzzy-findings/corpus), or else
      ruzzy-findings/ in the working directory when its campaign.json
      ran this harness.
      Exit status: #{EXIT_OK} with a report, #{EXIT_HARNESS_ERROR} when the harness could not run or
      every input crashed the process, #{EXIT_USAGE} for usage errors.
    TEXT

    # The replay could not produce a report (the harness does not load,
    # every input kills the process).
    class ReplayError < StandardError
      include Ruzzy::Error
    end

    # Symbols a sanitizer-built extension needs from a preload: the
    # extension will not load without one.
    SANITIZER_SYMBOL = /undefined symbol: (?:__asan_|__sancov_|__sanitizer_cov_|__ubsan_)\w*/

    # The outcome of a replay: +raised+ maps each input that raised to its
    # Raised exception, +crashed+ lists [input, why] for each that killed
    # the process.
    Replay = Struct.new(:inputs, :coverage, :first_hits, :raised, :crashed, keyword_init: true)
    # The exception an input raised: its class's name and its message.
    Raised = Struct.new(:class_name, :message)

    # The parent side: parses the command line, runs the children, writes.
    class Command
      # The child process's script (it loads the harness and replays).
      REPLAY_SCRIPT = File.expand_path("cov/replay.rb", __dir__)

      # +sanitizer+: the sanitizer ruzzy's own --sanitizer named, if any;
      # +program+: the ruzzy command (it measures C coverage).
      def initialize(argv, out:, err:, sanitizer: nil, program: "ruzzy")
        @argv = argv.dup
        @out = out
        @err = err
        @output = "coverage-report"
        @patterns = { include: [], exclude: [], all: false }
        @load_path = []
        @sanitizer = sanitizer
        @program = program
      end

      def run
        harness, sources = parse
        return EXIT_OK unless harness

        inputs = corpus_files(sources)
        replay = replay_all(harness, inputs)
        check(replay)
        sections = [native_coverage(harness, replay), progress_plot(harness, sources)].compact
        report = Report.new(replay, filter_description, sections:)
        report.write(@output)
        @out.puts report.summary(@output)
        EXIT_OK
      rescue ReplayError => e
        @err.puts "ruzzy cov: #{e.message}"
        EXIT_HARNESS_ERROR
      end

      private

      def parse
        parser = CommandOptions.parser("ruzzy cov")
        parser.on("-o REPORT_DIR") { |dir| @output = dir }
        CommandOptions.coverage_patterns(parser, @patterns)
        parser.on("--all") { @patterns[:all] = true }
        parser.on("--campaign=DIR") { |dir| @campaign = dir }
        CommandOptions.session(parser) { |count| @patterns[:session] = count }
        CommandOptions.sanitizer(parser) { |name| @sanitizer = name }
        CommandOptions.load_path(parser) { |dir| @load_path << dir }
        return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE)

        harness, *sources = @argv
        @patterns[:rack_app] = rack_app(sources.shift) if harness == "rack" && !File.exist?(harness)
        raise CLI::UsageError, "ruzzy cov needs a harness and at least one corpus" if sources.empty?
        raise CLI::UsageError, "ruzzy cov: no such harness file: #{harness}" unless rack? || File.file?(harness)

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

      # Whether the target is a web app (`ruzzy cov rack APP`).
      def rack? = !@patterns[:rack_app].nil?

      # `rack APP`'s APP, checked, as an absolute path.
      def rack_app(app)
        raise CLI::UsageError, "ruzzy cov rack needs an app and at least one corpus" unless app
        raise CLI::UsageError, "ruzzy cov: no such app: #{app}" unless File.exist?(app)

        File.expand_path(app)
      end

      # The words after ruzzy's options that name the target.
      def target_words(harness) = rack? ? ["rack", @patterns[:rack_app]] : [File.expand_path(harness)]

      # A report where every input killed the replay says nothing about
      # the code: the reason is the report.
      def check(replay)
        return unless !replay.inputs.empty? && replay.crashed.size == replay.inputs.size

        path, why = replay.crashed.first
        raise ReplayError, "every input (#{replay.inputs.size}) crashed the process; the first, #{path}, " \
                           "ended with:\n#{why}"
      end

      # The C extension's coverage, when it was built with a sanitizer (and
      # so with libFuzzer's instrumentation).
      def native_coverage(harness, replay)
        return nil unless @sanitizer

        command = [RbConfig.ruby, File.expand_path(@program), "--sanitizer=#{@sanitizer}",
                   *@load_path.flat_map { |dir| ["-I", dir] }, *target_words(harness)]
        NativeCoverage.measure(command, replay.inputs - replay.crashed.map(&:first))
      end

      # The plot of the campaign that grew the corpus: --campaign; or else
      # the findings directory a corpus source lies in; or else the default
      # findings directory in the working directory, when its campaign ran
      # +harness+ (a campaign given its own corpus directory keeps its
      # findings there).
      def progress_plot(harness, sources)
        return ProgressPlot.from(@campaign) if @campaign

        around = sources.map { |source| File.dirname(File.expand_path(source)) }
        default = File.expand_path(CLI::DEFAULT_FINDINGS_DIR)
        ran = Array(Findings::Store.new(default).campaign&.fetch("command", nil)).include?(target_words(harness).last)
        (around + (ran ? [default] : [])).uniq.lazy.filter_map { |dir| ProgressPlot.from(dir) }.first
      end

      # The environment of a replay child: the sanitizer preload, if any.
      def child_environment
        return {} unless @sanitizer

        Sanitizers.preload_environment(Sanitizers.path!(@sanitizer))
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
        _, errors, process = Open3.capture3(child_environment, *command)
        finished = absorb(status, dump, replay, pending)
        return finished if process.success? || finished.size == pending.size
        return run_child(harness, pending, work, replay) if !ready?(status) && preload_needed?(errors)

        finished << crashed(status, pending, finished, errors, replay)
      end

      # Whether the child loaded the harness (and went on to the inputs).
      def ready?(status)
        File.exist?(status) && File.foreach(status).any? { |line| line.start_with?("READY") }
      end

      # Whether the harness failed to load for want of a sanitizer preload
      # that is not there yet: then AddressSanitizer's is arranged.
      def preload_needed?(errors)
        return false if @sanitizer || !errors.match?(SANITIZER_SYMBOL)

        @sanitizer = "address"
        @err.puts "ruzzy cov: the harness loads an extension built with a sanitizer " \
                  "(#{errors[SANITIZER_SYMBOL]}); replaying with --sanitizer=address"
        true
      end

      # Records the input that killed a child; returns its index.
      def crashed(status, pending, finished, errors, replay)
        raise ReplayError, "the harness failed before replaying any input:\n#{errors.strip}" unless ready?(status)

        crasher = started_not_finished(status) || pending.find { |index, _| !finished.include?(index) }.first
        replay.crashed << [replay.inputs[crasher], crash_reason(errors)]
        crasher
      end

      # The lines of a dead child's output that say why: a sanitizer's or
      # Ruby's report headline, or else the last lines.
      def crash_reason(errors)
        errors.lines.grep(/ERROR: |runtime error: |\[BUG\]|Segmentation fault/).first(2).join.strip.then do |reason|
          reason.empty? ? errors.lines.last(3).join.strip : reason
        end
      end

      def absorb(status, dump, replay, pending)
        lines = File.exist?(status) ? File.readlines(status, chomp: true) : []
        finished = []
        lines.grep(/\ADONE /).each do |line|
          _, index, outcome, exception = line.split(" ", 4)
          finished << Integer(index)
          replay.raised[replay.inputs[Integer(index)]] = Raised.new(*JSON.parse(exception)) if outcome == "raised"
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

# frozen_string_literal: true

require "fileutils"
require "io/wait"
require "rbconfig"
require_relative "protocol"
require_relative "worker_output"
require_relative "display"
require_relative "progress_log"
require_relative "corpus_dirs"
require_relative "../exit_status"
require_relative "../findings/store"
require_relative "../findings/kinds"
require_relative "../findings/reproduction"
require_relative "../engine/libfuzzer_args"
require_relative "../shown_path"
require_relative "../cli/command_options"

module Ruzzy
  module Campaign
    # Runs a campaign: workers (`ruzzy [OPTIONS] HARNESS ...` with
    # ENV_FINDINGS_DIR set) one after another until the time is up, each
    # starting from the corpus the previous ones grew. A worker records
    # Ruby exceptions and detector findings itself and keeps fuzzing; when a
    # finding ends a worker, its artifact and report are filed here and the
    # next worker starts. At the end: the summary, and EXIT_FINDING if
    # anything was found.
    #
    # libFuzzer's flags are the worker's, except: -max_total_time is the
    # campaign's (each worker gets what is left), -seed=N gives worker k the
    # seed N+k (so a new worker does not walk into the same finding again),
    # -artifact_prefix is the campaign's, -runs counts per worker, and once a
    # hang was found, -timeout is REPEAT_TIMEOUT unless given.
    class Supervisor
      # Worker starts that end before libFuzzer read the corpus, in a row,
      # after which the campaign gives up.
      STARTUP_FAILURES = 3
      # The progress log's columns after the time.
      LOGGED = ProgressLog::COLUMNS.drop(1).map(&:to_sym).freeze
      # The artifact of the finding that ended a worker.
      ARTIFACT = Findings::FINAL_ARTIFACT

      # +options+ are ruzzy's own options for the worker (before the
      # harness), +target+ what to fuzz (the harness's path, or "run-test",
      # the test file and the fuzz test's name), +args+ the harness's
      # arguments (libFuzzer flags and corpus directories), +ruby_options+
      # those of the Ruby that runs +program+ (-I DIR). A fuzz test
      # brings its own corpus directory; a harness without one gets
      # DIR/corpus.
      def initialize(dir:, options:, target:, args:, program:, out:, ruby_options: [])
        @store = Findings::Store.new(dir)
        @ruby_options = ruby_options
        @options = options
        @target = target.size == 1 ? [File.expand_path(target.first)] : target
        @args = LibFuzzerArgs.new(["ruzzy", *args])
        @program = File.expand_path(program)
        @display = Display.new(out)
        @before = {}
        @workers = 0
        @executions = 0
        @interrupted = false
      end

      def run
        prepare
        status = loop_workers
        @store.flush
        groups = found_now
        seconds = now - @started
        @display.news("ruzzy: campaign: #{@executions} executions in #{seconds.round} s " \
                      "(#{(@executions / [seconds, 1e-3].max).round}/s), #{@workers} worker(s)")
        @display.summary(groups, groups.map(&:name) - @before.keys, ShownPath.of(@store.dir))
        return EXIT_FINDING unless groups.empty?

        @interrupted ? EXIT_INTERRUPTED : status
      end

      private

      def prepare
        FileUtils.mkdir_p([artifacts_dir, @store.dir])
        @before = @store.groups.to_h { |group| [group.name, group.findings] }
        @progress_log = ProgressLog.new(@store.dir)
        @started = now
        @corpus = corpus_dirs_or_own
        @reproduction = Findings::Reproduction.current(command)
        timeout = @args.given?("timeout") ? @args.timeout : nil
        @store.write_campaign(@reproduction.to_campaign.merge("timeout" => timeout))
        @deadline = (seconds = Integer(@args.value("max_total_time") || "0", 10)).positive? ? now + seconds : nil
        @display.news("ruzzy: campaign: findings in #{ShownPath.of(@store.dir)}/, corpus in " \
                      "#{@corpus.map { |dir| ShownPath.of(dir) }.join(", ")}, log in #{ShownPath.of(log_path)}")
      end

      # Runs workers until one ends without a finding; returns its status.
      def loop_workers
        startup_failures = 0
        (0..).each do |index|
          remaining = @deadline && (@deadline - now).ceil
          return EXIT_OK if remaining && remaining <= 0

          status, output = run_worker(index, remaining)
          @workers = index + 1
          return last_worker(status, output) if file_artifacts(output).zero? || @interrupted

          startup_failures = output.initialised? ? 0 : startup_failures + 1
          return give_up(output) if startup_failures >= STARTUP_FAILURES
        end
      end

      # The status of a worker that ended without a finding to file: the
      # time was up, the run was interrupted, or something is wrong with
      # the harness (said here, with what the worker printed last).
      def last_worker(status, output)
        return status if [EXIT_OK, EXIT_INTERRUPTED].include?(status) || @interrupted

        @display.news("ruzzy: a worker ended with status #{status} without a finding; it printed:\n" \
                      "#{output.report.lines.last(40).join}")
        status
      end

      def run_worker(index, remaining)
        output = File.open(log_path, "a") do |log|
          log.puts "==> worker #{index}: #{worker_command(index, remaining).join(" ")}"
          WorkerOutput.new(log).tap { |reader| @status = follow(reader, index, remaining) }
        end
        [@status, output]
      end

      # Runs one worker, reading its output until it ends; returns its exit
      # status.
      def follow(reader, index, remaining)
        env = { ENV_FINDINGS_DIR => @store.dir }
        IO.popen(env, worker_command(index, remaining), err: %i[child out]) do |io|
          @worker = io.pid
          previous = trap_interrupt
          read_all(io, reader)
          trap("INT", previous)
        end
        @executions += reader.progress&.executions.to_i
        status = Process.last_status
        status.exitstatus || (128 + status.termsig.to_i)
      end

      def read_all(io, reader)
        loop do
          ready = io.wait_readable(1)
          if ready
            chunk = io.read_nonblock(65_536, exception: false)
            break if chunk.nil?

            reader.feed(chunk) { |name, kind, title| announce(name, kind, title) } if chunk.is_a?(String)
          end
          show_status(reader)
        end
        reader.finish { |name, kind, title| announce(name, kind, title) }
        show_status(reader, ended: true)
      end

      def trap_interrupt
        trap("INT") do
          @interrupted = true
          Process.kill("INT", @worker)
        rescue SystemCallError
          nil
        end
      end

      # Shows the status line and logs progress when either is due (+ended+:
      # the worker ended, its last numbers are logged).
      def show_status(reader, ended: false)
        return if !ended && @last_status && now - @last_status < 1

        @last_status = now
        progress = reader.progress
        found = found_now
        @reached = reader.reached || @reached
        # Coverage and corpus stay those the last worker reported until the
        # new one reports its own (it starts from the same corpus).
        @coverage = progress&.coverage || @coverage
        @corpus_size = progress&.corpus || @corpus_size
        numbers = { executions: @executions + progress&.executions.to_i, coverage: @coverage.to_i,
                    corpus: @corpus_size.to_i, groups: found.size,
                    findings: found.sum { |group| group.findings - @before.fetch(group.name, 0) } }
        @display.status(**numbers, exec_per_second: (numbers[:executions] / [now - @started, 1].max).round,
                                   reached: @reached)
        @progress_log.record(now - @started, force: ended) { numbers.values_at(*LOGGED) }
      end

      # The groups with findings in this campaign.
      def found_now
        @store.groups.select { |group| group.findings > @before.fetch(group.name, 0) }
      end

      def announce(name, kind, title)
        @hang_found ||= kind == Findings::KINDS[:timeout].group
        @display.news("  NEW  #{name} (#{kind}): #{title}")
      end

      # Files the artifacts a worker left (the finding that ended it);
      # returns how many.
      def file_artifacts(output)
        artifacts = Dir.children(artifacts_dir).grep(ARTIFACT).sort
        report = output.report
        identity = Findings::Identity.of_report(report)
        artifacts.each do |name|
          path = File.join(artifacts_dir, name)
          input = File.binread(path)
          outcome = @store.record(identity, input, filed_report(report, path, identity.group))
          File.delete(path)
          set_aside_corpus_input(input, identity) unless output.initialised?
          announce(identity.group, identity.kind, identity.title) if outcome == :new
          @hang_found ||= identity.kind == Findings::KINDS[:timeout].group
        end
        artifacts.size
      end

      # The worker's +report+ of the artifact at +path+ as +group+'s: it
      # names the group's input (the artifact is deleted once filed), with
      # the commands that reproduce and minimise the group.
      def filed_report(report, path, group)
        @reproduction.filed_report(report, from: path, to: File.join(@store.dir, group, Findings::Store::INPUT),
                                           minimise: Findings::Reproduction.minimise_line(@store.dir, group))
      end

      # An input of the corpus that ends the worker while libFuzzer reads
      # the corpus would end every worker: it moves into its group.
      def set_aside_corpus_input(input, identity)
        @corpus.each do |dir|
          Dir.glob(File.join(dir, "*")).each do |file|
            next unless File.file?(file) && File.size(file) == input.bytesize && File.binread(file) == input

            FileUtils.mv(file, File.join(@store.dir, identity.group, "from-corpus-#{File.basename(file)}"))
            @display.news("  moved #{ShownPath.of(file)} (it ends every worker) into #{identity.group}/")
          end
        end
      end

      def give_up(output)
        @display.news("ruzzy: #{STARTUP_FAILURES} workers in a row ended before fuzzing started; " \
                      "the last one printed:\n#{output.report}")
        EXIT_HARNESS_ERROR
      end

      def worker_command(index, remaining)
        args = @args
        args = args.with("max_total_time", remaining) if remaining
        seed = Integer(args.value("seed") || "0", 10)
        args = args.with("seed", seed + index) if seed.positive?
        args = args.with("timeout", REPEAT_TIMEOUT) if @hang_found && !args.given?("timeout")
        args = args.with("artifact_prefix", "#{artifacts_dir}/")
        flags = args.to_a.drop(1).select { |word| word.start_with?("-") && !word.start_with?("-exact_artifact_path=") }
        [*command, *flags, *@corpus]
      rescue ArgumentError
        raise CLI::UsageError, "-seed and -max_total_time take whole numbers"
      end

      # The command that runs the harness (a worker's without libFuzzer's
      # flags and the corpus).
      def command
        [RbConfig.ruby, *@ruby_options, @program, *@options, *@target]
      end

      # The corpus directories among the harness's arguments, or else the
      # campaign's own (a fuzz test brings its own).
      def corpus_dirs_or_own
        given = CorpusDirs.given(@args.to_a.drop(1))
        return given unless given.empty? && @target.size == 1

        [File.join(@store.dir, "corpus")].tap { |own| FileUtils.mkdir_p(own) }
      end

      def artifacts_dir
        File.join(@store.dir, ".artifacts")
      end

      def log_path
        File.join(@store.dir, "campaign.log")
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end

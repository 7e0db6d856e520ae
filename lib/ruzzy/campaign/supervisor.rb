# frozen_string_literal: true

# Every file of lib/ruzzy/campaign/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: campaign_protocol, command_options, error, exit_status, finding_kinds, findings, libfuzzer_args,
# shown_duration, shown_path.

require "fileutils"
require "rbconfig"
require_relative "../campaign_protocol"
require_relative "workers"
require_relative "display"
require_relative "progress_log"
require_relative "corpus_dirs"
require_relative "corpus_clock"
require_relative "lone_runs"
require_relative "artifact_filing"
require_relative "../exit_status"
require_relative "../findings/store"
require_relative "../finding_kinds"
require_relative "../findings/reproduction"
require_relative "../libfuzzer_args"
require_relative "../shown_path"
require_relative "../command_options"

module Ruzzy
  module Campaign
    # Runs a campaign: +workers+ worker processes (`ruzzy [OPTIONS] HARNESS
    # ...` with ENV_FINDINGS_DIR set) fuzzing at once on one corpus until
    # the time is up. libFuzzer re-reads the first corpus directory every
    # -reload seconds (default 1), so each worker's new inputs reach the
    # others while they run. A worker records Ruby exceptions and detector
    # findings itself and keeps fuzzing; when a finding ends a worker (or
    # it dies), its artifact and report are filed here and a new worker
    # takes its place at once, the others going on. At the end: the
    # summary, and EXIT_FINDING if anything was found.
    #
    # libFuzzer's flags are the workers', except: -max_total_time is the
    # campaign's (each worker gets what is left), -seed=N gives the k-th
    # worker started the seed N+k (so that no two run alike and a new
    # worker does not walk into the same finding again), -artifact_prefix
    # is the campaign's, -runs counts per worker, -fork, -jobs and
    # -workers choose the number of workers (Worker.count) instead of
    # reaching libFuzzer, and once a hang was found (or when one is on file
    # already), -timeout is REPEAT_TIMEOUT unless given.
    #
    # A hang is what runs over the campaign's hang threshold alone (its
    # -timeout, ruzzy's default if not given; campaign.json's
    # "hang_seconds"): whatever a worker stopped as a hang, at whichever
    # limit, is a suspect that HangCheck runs alone, and files only if it
    # runs over. The input of every other group filed runs alone once too
    # (AloneCheck): one that passes alone is said to.
    class Supervisor
      # Worker starts that end before libFuzzer read the corpus, in a row,
      # after which the campaign gives up.
      STARTUP_FAILURES = 3
      # The progress log's columns after the time.
      LOGGED = ProgressLog::COLUMNS.drop(1).map(&:to_sym).freeze
      # Seconds a worker told to stop has before it is killed.
      STOP_SECONDS = 10

      # +options+ are ruzzy's own options for the worker (before the
      # harness), +target+ what to fuzz (the harness's path, or "run-test",
      # the test file and the fuzz test's name), +args+ the harness's
      # arguments (libFuzzer flags and corpus directories), +ruby_options+
      # those of the Ruby that runs +program+ (-I DIR), +workers+ how many
      # run at once (nil: see Worker.count). A fuzz test brings its
      # own corpus directory; a harness without one gets DIR/corpus.
      def initialize(dir:, options:, target:, args:, program:, out:, ruby_options: [], workers: nil)
        @store = Findings::Store.new(dir)
        @ruby_options = ruby_options
        @options = options
        @target = target.size == 1 ? [File.expand_path(target.first)] : target
        args = LibFuzzerArgs.new(["ruzzy", *args])
        @count = Worker.count(workers, args)
        @args = args.reject_flags { |name, _| Worker::FLAGS.include?(name) }
        @program = File.expand_path(program)
        @display = Display.new(out)
        @before = {}
        @interrupted = false
        @stop_at = nil
        @status = EXIT_OK
        @startup_streak = []
      end

      def run
        prepare
        status = run_workers
        @store.flush
        groups = found_now
        @display.totals(@workers.executions, now - @started, @workers.started, @count)
        slow = Dir.glob(File.join(@store.dir, SLOW_UNITS, "*")).size
        @display.summary(groups, groups.map(&:name) - @before.keys, ShownPath.of(@store.dir), slow:)
        return EXIT_FINDING unless groups.empty?

        @interrupted ? EXIT_INTERRUPTED : status
      end

      private

      def prepare
        FileUtils.mkdir_p([artifacts_dir, @store.dir])
        groups = @store.groups
        @before = groups.to_h { |group| [group.name, group.findings] }
        @hang_found = groups.any? { |group| Findings.hang?(group.kind) }
        @progress_log = ProgressLog.new(@store.dir)
        @started = now
        @corpus = corpus_dirs_or_own
        @reproduction = Findings::Reproduction.current(command)
        write_campaign
        @filing = ArtifactFiling.new(store: @store, reproduction: @reproduction, display: @display)
        @deadline = (seconds = Integer(@args.value("max_total_time") || "0", 10)).positive? ? now + seconds : nil
        @display.news("ruzzy: campaign: findings in #{ShownPath.of(@store.dir)}/, corpus in #{corpus_text}, " \
                      "log in #{ShownPath.of(log_path)}, #{@count} worker(s)")
      end

      # campaign.json: how to run the harness again, its -timeout if given,
      # and the hang threshold (HangCheck, `ruzzy findings replay`).
      def write_campaign
        timeout = @args.given?("timeout") ? @args.timeout : nil
        @hang_seconds = timeout || LibFuzzerArgs::RUZZY_DEFAULT_TIMEOUT
        @store.write_campaign(@reproduction.to_campaign.merge("timeout" => timeout, "hang_seconds" => @hang_seconds))
      end

      def corpus_text
        return "the fuzz test's directory" if @corpus.empty?

        @corpus.map { |dir| ShownPath.of(dir) }.join(", ")
      end

      # Starts the workers and runs the campaign until every worker has
      # ended and none is to replace it; returns the campaign's status.
      def run_workers
        File.open(log_path, "a") do |log|
          log.sync = true
          @workers = Workers.new(findings: @store.dir, log:, artifacts: artifacts_dir)
          @corpus_clock = CorpusClock.new(@corpus.first)
          previous = trap_stop
          begin
            @lone_runs = LoneRuns.new(dir: @store.dir, before: @before, reproduction: @reproduction,
                                      seconds: @hang_seconds, display: @display, announce: method(:announce)).start
            @count.times { start_worker }
            follow_workers until @workers.empty?
            @lone_runs.check_last unless @interrupted
            show_status(ended: true)
          ensure
            @lone_runs&.stop
            previous.each { |signal, handler| trap(signal, handler) }
            @workers.signal("KILL") # only if an exception ends the campaign early
          end
        end
        @status
      end

      # Reads what the running workers printed (at most a second's wait),
      # handles those that ended and shows the status.
      def follow_workers
        @workers.follow(1) { |name, kind, title| announce(name, kind, title) }.each do |worker|
          filed = @filing.file(worker, corpus: corpus_of(worker.output), timeout: worker_timeout) do |identity, new|
            announce(identity.group, identity.kind, identity.title) if new
            @hang_found ||= Findings.hang?(identity.kind)
          end
          FileUtils.rm_rf(worker.artifacts)
          next_step(worker, filed)
        end
        @lone_runs.show
        @workers.signal("KILL") if @stop_at && now > @stop_at
        @corpus_clock.watch(@workers.corpus_dir)
        @corpus_clock.tick
        show_announcements
        show_status
      end

      # Starts a worker with the time that is left, unless it is up.
      def start_worker
        remaining = @deadline && (@deadline - now).ceil
        return if remaining && remaining <= 0

        @workers.start { |index, artifacts| worker_command(index, remaining, artifacts) }
      end

      # What follows the end of +worker+ that left +filed+ artifacts:
      # another worker in its place after a finding or when it was killed;
      # none when its time or its -runs were up; the end of the campaign
      # when it was interrupted or something is wrong.
      def next_step(worker, filed)
        return if @stop_at

        code = worker.exit_code
        note_end(worker, code) if [EXIT_OK, EXIT_INTERRUPTED].include?(code) && filed.zero?
        return stop_campaign(EXIT_INTERRUPTED, interrupted: true) if code == EXIT_INTERRUPTED
        return if code == EXIT_OK && filed.zero?
        return stop_campaign(last_worker(code, worker.output)) if filed.zero? && !worker.killed?

        @startup_streak = worker.output.initialised? ? [] : @startup_streak + [filed]
        return stop_campaign(give_up(worker.output)) if @startup_streak.size >= STARTUP_FAILURES

        if filed.zero?
          @display.news("  worker #{worker.index} (pid #{worker.pid}) #{worker.ended}; a new worker takes its place")
        end
        start_worker
      end

      # Says why a worker ended unasked (the campaign's own stop returned
      # earlier): interrupted, or status 0 before its -runs or time.
      def note_end(worker, code)
        left = @deadline && (@deadline - now).round
        return if code == EXIT_OK && (@args.value("runs") || left.nil? || left < 1)

        what = code == EXIT_OK ? "ended with status 0 #{left} s before its time" : "was interrupted (SIGINT)"
        @display.news("ruzzy: worker #{worker.index} (pid #{worker.pid}) #{what}; it printed:\n" \
                      "#{worker.output.report.lines.last(20).join}")
      end

      # Ends the campaign with +status+: the running workers are told to
      # stop (they print their counts) and killed if they do not within
      # STOP_SECONDS.
      def stop_campaign(status, interrupted: false)
        @interrupted ||= interrupted
        @status = status if @status == EXIT_OK
        @stop_at ||= now + STOP_SECONDS
        @workers.signal("INT")
      end

      # Ctrl-C (SIGINT) or SIGTERM: every worker stops, and the summary is
      # printed. Returns the handlers it replaced.
      def trap_stop
        %w[INT TERM].to_h do |signal|
          [signal, trap(signal) { stop_campaign(EXIT_INTERRUPTED, interrupted: true) }]
        end
      end

      # The status of a worker that ended without a finding to file and
      # not at its time: something is wrong with the harness (said here,
      # with what the worker printed last).
      def last_worker(status, output)
        internal = Findings::Identity.of_report(output.report)
        internal = nil unless internal.kind == Findings::GROUP_KINDS.fetch(:internal)
        @display.news("ruzzy: a worker ended #{internal ? "on #{internal.title}" : "with status #{status}"} " \
                      "without a finding; it printed:\n#{output.report.lines.last(40).join}" \
                      "#{ArtifactFiling.internal_error_note(log_path) if internal}")
        status
      end

      # Shows what the workers announced (Workers#new_announcements).
      def show_announcements = @workers.new_announcements.each { |text| @display.news(text) }

      # Shows the status line and logs progress when either is due (+ended+:
      # the campaign ended, its last numbers are logged).
      def show_status(ended: false)
        return if !ended && @last_status && now - @last_status < 1

        @last_status = now
        counted, reached = @workers.numbers
        found = found_now
        numbers = { **counted, groups: found.size,
                               findings: found.sum { |group| group.findings - @before.fetch(group.name, 0) } }
        @display.status(**numbers, exec_per_second: (numbers[:executions] / [now - @started, 1].max).round, reached:)
        @progress_log.record(now - @started, force: ended) { numbers.values_at(*LOGGED) }
      end

      # The groups with findings in this campaign.
      def found_now
        @store.groups.select { |group| group.findings > @before.fetch(group.name, 0) }
      end

      def announce(name, kind, title)
        @hang_found ||= Findings.hang?(kind)
        @display.news("  NEW  #{name} (#{kind}): #{title}")
      end

      # The -timeout workers run with now.
      def worker_timeout
        return @args.timeout if @args.given?("timeout")

        @hang_found ? REPEAT_TIMEOUT : @hang_seconds
      end

      # Ends a campaign whose workers keep ending before fuzzing starts
      # (Display#gave_up), each on an input of the corpus or not.
      def give_up(output)
        moved = @startup_streak.all?(&:positive?) ? ShownPath.of(@store.dir) : nil
        @display.gave_up(STARTUP_FAILURES, output.report, moved_from: moved)
        EXIT_HARNESS_ERROR
      end

      def worker_command(index, remaining, artifacts)
        args = @args
        args = args.with("max_total_time", remaining) if remaining
        seed = Integer(args.value("seed") || "0", 10)
        args = args.with("seed", seed + index) if seed.positive?
        args = args.with("timeout", REPEAT_TIMEOUT) if @hang_found && !args.given?("timeout")
        args = args.with("artifact_prefix", "#{artifacts}/")
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
        return given unless given.empty? && (@target.size == 1 || @target.first == "rack")

        [File.join(@store.dir, "corpus")].tap { |own| FileUtils.mkdir_p(own) }
      end

      # The corpus directories the workers read: the campaign's, or the one
      # a fuzz test's worker announced in +output+.
      def corpus_of(output)
        @corpus.empty? ? Array(output.corpus_dir) : @corpus
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

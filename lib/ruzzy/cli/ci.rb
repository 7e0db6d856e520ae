# frozen_string_literal: true

require "open3"
require "rbconfig"
require "fileutils"
require "digest/sha1"
require_relative "../exit_status"
require_relative "../command_options"
require_relative "../findings/store"
require_relative "../finding_kinds"
require_relative "../shown_path"
require_relative "../test_frameworks/fuzz_test"

module Ruzzy
  # `ruzzy ci`: fuzzes every fuzz test of a project for a fixed time each and
  # prints a summary; exits 77 when any of them found something.
  #
  # Fuzz tests are found in test/ and spec/ (or the paths given): files named
  # *_test.rb, test_*.rb or *_spec.rb that mention fuzz_test. Each runs as a
  # campaign (`ruzzy --findings=LOG_DIR/findings/<file_test> run-test FILE NAME
  # -max_total_time=N`: every finding recorded, grouped, fuzzing goes on),
  # writing new corpus entries into its corpus directory, the smallest input
  # of each group there too (as crash-<sha1>, so the ordinary test run
  # replays it; a typed fuzz test saves its exceptions itself, as regression
  # files, so only its other findings are copied), and its output to
  # LOG_DIR/<slug>.log (<file_slug> when two tests share a name). With
  # --stop-at-first, the first finding ends the test's run. `lib/` is on
  # the load path, as with `rake test`.
  #
  # Fuzz tests run at once, on --workers cores (default: all): as many
  # tests as there are cores, a test started while cores are spare getting
  # its share of them as campaign workers (one test on two cores: a
  # campaign with two workers). Each test's lines are printed together when
  # it ends.
  class CI
    USAGE = <<~TEXT.freeze
      Usage: ruzzy ci [--seconds=N] [--workers=N] [--log-dir=DIR] [--stop-at-first] [PATH...] [-- LIBFUZZER_FLAGS]

      Runs every fuzz test (fuzz_test in Minitest or RSpec files under PATH,
      default test/ and spec/) for N seconds (default 60) and prints a summary.
      Tests run at once on --workers processes (default:
      #{CommandOptions.default_workers_text}): as many tests at a time, spare ones as more
      workers of a test's campaign; each test's lines are printed when it ends.
      Every finding is recorded, grouped by bug, in DIR/findings/<test>/ (see
      ruzzy findings) and fuzzing goes on; --stop-at-first ends a test's run
      at its first finding instead.
      Exit status: #{EXIT_OK} when nothing was found, #{EXIT_FINDING} when a fuzz test found a bug,
      #{EXIT_HARNESS_ERROR} when a fuzz test could not run.
    TEXT
    Test = Struct.new(:name, :file, :form) do
      def typed? = form == FuzzTest::TYPED
    end
    Result = Struct.new(:test, :status, :log, :finding, :artifact, :before, :after, :groups)

    def initialize(argv, out:, err:, program:)
      @argv = argv.dup
      @out = out
      @err = err
      @program = File.expand_path(program)
      @seconds = 60
      @log_dir = "ruzzy-ci-logs"
      @flags = []
      @keep_going = true
      @workers = nil
    end

    def run
      paths = parse
      return EXIT_OK if paths.nil?

      tests = paths.flat_map { |file| list(file) }
      if tests.empty?
        @out.puts "ruzzy ci: no fuzz tests found in #{paths.empty? ? "test/ or spec/" : @argv.join(", ")}"
        return EXIT_OK
      end
      @clashing = tests.map { |test| FuzzTest.slug(test.name) }.tally.select { |_, count| count > 1 }.keys
      @out.puts "ruzzy ci: #{tests.size} fuzz test(s), #{@seconds} s each, #{[@workers, tests.size].min} at a time"
      @out.flush
      summarize(fuzz_all(tests))
    end

    private

    def parse
      split = @argv.index("--")
      @flags = split ? @argv.slice!(split..).drop(1) : []
      parser = CommandOptions.parser("ruzzy ci")
      parser.on("--seconds=N", Integer) do |seconds|
        raise CLI::UsageError, "ruzzy ci: --seconds takes a positive number, got #{seconds}" unless seconds.positive?

        @seconds = seconds
      end
      parser.on("--log-dir=DIR") { |dir| @log_dir = dir }
      CommandOptions.workers(parser) { |count| @workers = count }
      parser.on("--stop-at-first") { @keep_going = false }
      return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE)

      @workers ||= CommandOptions.default_workers
      candidates(@argv.empty? ? %w[test spec].select { |dir| File.directory?(dir) } : @argv)
    end

    def candidates(paths)
      paths.flat_map do |path|
        raise CLI::UsageError, "ruzzy ci: no such file or directory: #{path}" unless File.exist?(path)

        files = File.directory?(path) ? Dir.glob(File.join(path, "**", "{*_test,test_*,*_spec}.rb")) : [path]
        files.sort.select { |file| File.read(file).include?("fuzz_test") }
      end
    end

    def environment(extra = {})
      lib = File.expand_path("lib")
      rubyopt = File.directory?(lib) ? "-I#{lib} #{ENV.fetch("RUBYOPT", "")}".strip : ENV.fetch("RUBYOPT", "")
      { "RUBYOPT" => rubyopt }.merge(extra)
    end

    def list(file)
      output, status = Open3.capture2e(environment(FuzzTest::ENV_LIST => "1"), RbConfig.ruby, file)
      unless status.success?
        @err.puts "ruzzy ci: listing the fuzz tests of #{file} failed:\n#{output}"
        return []
      end
      output.lines.grep(/\AFUZZ_TEST\t/).map { |line| Test.new(*line.chomp.split("\t").drop(1)) }
    end

    # Fuzzes +tests+ at once on @workers cores, printing each one's report
    # when it ends; returns the results in the order of +tests+. A test
    # starts when a core is free and gets an equal share of the free cores
    # with the tests still waiting (at least one).
    def fuzz_all(tests)
      FileUtils.mkdir_p(@log_dir)
      waiting = tests.each_with_index.to_a
      results = []
      ended = Queue.new
      running = {}
      free = @workers
      until waiting.empty? && running.empty?
        while free.positive? && !waiting.empty?
          cores = [free / waiting.size, 1].max
          test, index = waiting.shift
          free -= cores
          running[index] = [cores, Thread.new(test, index, cores) { |*job| ended << [job[1], fuzz(job[0], job[2])] }]
        end
        index, result = ended.pop
        cores, thread = running.delete(index)
        thread.join
        free += cores
        report(result)
        results[index] = result
      end
      results
    end

    # Fuzzes +test+ with +workers+ campaign workers.
    def fuzz(test, workers)
      log = File.join(@log_dir, "#{log_slug(test)}.log")
      corpus = corpus_of(test)
      before = count_files(corpus)
      findings = File.join(@log_dir, "findings", file_slug(test))
      FileUtils.rm_rf(findings)
      campaign = @keep_going ? ["--findings=#{findings}", "--workers=#{workers}"] : []
      command = [RbConfig.ruby, @program, *campaign, "run-test", test.file, test.name, "-max_total_time=#{@seconds}",
                 *@flags]
      output, status = Open3.capture2e(environment, *command)
      File.write(log, output)
      groups = @keep_going ? keep_as_examples(Findings::Store.new(findings).groups, corpus, test) : []
      Result.new(test, status.exitstatus, log, finding_of(output), output[/Test unit written to (\S+)/, 1],
                 before, count_files(corpus), groups)
    end

    # The name of +test+'s log: its own name's slug, or its file's and
    # name's (as its findings directory) when another test of this run has
    # the same name.
    def log_slug(test)
      name = FuzzTest.slug(test.name)
      @clashing.include?(name) ? file_slug(test) : name
    end

    def file_slug(test)
      FuzzTest.slug("#{ShownPath.of(test.file)} #{test.name}")
    end

    # Copies each group's input into +corpus+ as crash-<sha1>, where the
    # ordinary test run replays it (but for a typed test's exceptions, which
    # it saved as regression files); returns +groups+.
    def keep_as_examples(groups, corpus, test)
      groups.each do |group|
        next if test.typed? && group.kind == Findings::GROUP_KINDS.fetch(:exception)

        input = File.binread(group.input_path)
        FileUtils.mkdir_p(corpus)
        File.binwrite(File.join(corpus, "#{Findings::KINDS[:crash].prefix}#{Digest::SHA1.hexdigest(input)}"), input)
      end
    end

    def corpus_of(test)
      File.join(File.dirname(File.expand_path(test.file)), "fuzz", FuzzTest.slug(test.name))
    end

    def count_files(dir)
      File.directory?(dir) ? Dir.children(dir).count { |name| !name.match?(/\A(crash|timeout|oom|leak)-/) } : 0
    end

    def finding_of(output)
      output[/uncaught Ruby exception in the fuzz target\n(.+)$/, 1] ||
        output[/ERROR: (AddressSanitizer: [^\n]+|libFuzzer: [^\n]+)/, 1] ||
        output[/runtime error: [^\n]+/]
    end

    def summarize(results)
      found = results.count { |result| result.status == EXIT_FINDING }
      failed = results.count { |result| ![EXIT_OK, EXIT_FINDING].include?(result.status) }
      @out.puts "ruzzy ci: #{found} of #{results.size} fuzz test(s) found a bug" \
                "#{failed.positive? ? ", #{failed} could not run" : ""}; logs in #{@log_dir}/"
      return EXIT_FINDING if found.positive?

      failed.positive? ? EXIT_HARNESS_ERROR : EXIT_OK
    end

    # Prints +result+'s lines in one write (tests end while others run).
    def report(result)
      test = result.test
      where = "#{test.name} (#{ShownPath.of(test.file)})"
      lines = case result.status
              when EXIT_OK
                ["  ok     #{where}: corpus #{result.before} -> #{result.after} inputs"]
              when EXIT_FINDING
                finding_lines(where, result)
              else
                ["  ERROR  #{where}: exit status #{result.status.inspect}, see #{result.log}"]
              end
      @out.write(lines.map { |line| "#{line}\n" }.join)
      @out.flush
    end

    def finding_lines(where, result)
      if result.groups.empty?
        return ["  FOUND  #{where}: #{result.finding || "see the log"}",
                *(result.artifact ? ["         input: #{ShownPath.of(result.artifact)}"] : []),
                "         it now fails as a regression example in the ordinary test run"]
      end
      ["  FOUND  #{where}: #{result.groups.size} bug(s), #{result.groups.sum(&:findings)} finding(s)",
       *result.groups.map { |group| "         #{group.name}: #{group.title}" },
       "         each now fails as a regression example in the ordinary test run; " \
       "ruzzy findings #{ShownPath.of(File.dirname(result.groups.first.dir))} shows them"]
    end
  end
end

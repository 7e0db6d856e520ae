# frozen_string_literal: true

require_relative "version"
require_relative "sanitizers"
require_relative "expected_exceptions"
require_relative "command_line"
require_relative "fuzz_test"
require_relative "ci"
require_relative "oss_fuzz"
require_relative "cov"
require_relative "detectors"
require "rbconfig"

module Ruzzy
  # The `ruzzy` command: `ruzzy [OPTIONS] HARNESS.rb [libFuzzer flags and corpus dirs]`.
  #
  # It loads the harness as the main program (so `$PROGRAM_NAME` is the
  # harness and `ARGV` holds everything after it, which is what
  # Ruzzy::DEFAULT_ARGS hands to libFuzzer) and lets the harness call
  # Ruzzy.fuzz. It loads ruzzy itself only after the command line is
  # understood, so DEFAULT_ARGS sees the harness's arguments.
  class CLI
    USAGE = <<~TEXT
      Usage: ruzzy [OPTIONS] HARNESS.rb [LIBFUZZER_FLAGS] [CORPUS_DIR | INPUT_FILE]...
             ruzzy [OPTIONS] dummy [LIBFUZZER_FLAGS]
             ruzzy [OPTIONS] run-test TEST_FILE NAME [LIBFUZZER_FLAGS]
             ruzzy ci [--seconds=N] [PATH...]
             ruzzy oss-fuzz-build HARNESS.rb --out=DIR [-I DIR]... [--sanitizer=NAME]
             ruzzy cov [-o REPORT_DIR] HARNESS.rb CORPUS...

      Loads HARNESS.rb, which calls Ruzzy.fuzz(->(data) { ... }), and runs
      libFuzzer on it. Everything after HARNESS.rb goes to the harness as ARGV
      and, through Ruzzy::DEFAULT_ARGS, to libFuzzer. `ruzzy dummy` fuzzes
      ruzzy's bundled C extension under AddressSanitizer (an installation check).
      `ruzzy run-test` fuzzes one fuzz_test of a Minitest or RSpec file, writing
      into its corpus directory; `ruzzy ci` fuzzes all of them (ruzzy ci --help).

      Options (before HARNESS.rb):
        --sanitizer=NAME   run with a sanitizer preloaded: address (asan) or
                           undefined (ubsan), for C extensions built with it
        --include=PATTERN  instrument only matching paths (repeatable)
        --exclude=PATTERN  do not instrument matching paths (repeatable)
        --map-size=N       edge counters (default: fitted to the code)
        -I DIRECTORY       add DIRECTORY to the load path (like ruby -I)
        --no-coverage      do not instrument Ruby code (blind fuzzing)
        --no-compare-hooks do not report comparisons to libFuzzer
        --no-literal-dict  do not give libFuzzer the literals of the code as a
                           dictionary
        --disable-detectors=NAME[,NAME...]
                           turn off bug detectors (all: every one)
        --list-detectors   list the bug detectors and exit
        --ignore=CLASS[:/REGEXP/]
                           an exception the target raises on purpose (not a
                           finding), optionally only with a matching message
        -h, --help         show this help and exit
        -v, --version      print the version and exit

      A PATTERN starting with "/" matches paths that start with it; any other
      PATTERN matches paths containing it (--include=lib/mygem/). Coverage is
      on before HARNESS.rb loads, so everything it requires is instrumented,
      except ruzzy itself and code loaded before it (RubyGems).

      Examples:
        ruzzy examples/hello.rb -runs=100000
        ruzzy examples/hello.rb -seed=1 -max_total_time=60 corpus/
        ruzzy examples/hello.rb crash-0123abcd   # reproduce a crash
        ruzzy examples/hello.rb -help=1          # libFuzzer's own flags

      Exit status: 0 when the run ends without a finding, 77 after a finding
      (libFuzzer's -error_exitcode; sanitizer reports too), 72 when
      interrupted, 1 when the harness raises while loading, 2 for usage errors.
    TEXT

    EXIT_OK = 0
    EXIT_HARNESS_ERROR = 1
    EXIT_USAGE = 2

    # Raised for a command line ruzzy cannot act on.
    class UsageError < StandardError; end

    # +program+ is the path of the `ruzzy` executable, used to re-execute
    # the command with a sanitizer preloaded.
    def initialize(argv, out: $stdout, err: $stderr, program: $PROGRAM_NAME)
      @original_argv = argv.dup
      @argv = argv.dup
      @out = out
      @err = err
      @program = program
      @coverage = { include: [], exclude: [], map_size: nil }
      @coverage_enabled = true
      @sanitizer = nil
      @ignore = []
    end

    # Runs the command; returns the process exit status.
    def run
      harness, harness_args = parse
      return EXIT_OK unless harness

      return CI.new(harness_args, out: @out, err: @err, program: @program).run if subcommand?(harness, "ci")
      return OssFuzz.new(harness_args, out: @out, err: @err).run if subcommand?(harness, "oss-fuzz-build")
      return Cov::Command.new(harness_args, out: @out, err: @err, program: @program).run if subcommand?(harness, "cov")
      return replay_for_coverage(harness_args) if subcommand?(harness, "cov-replay")

      @sanitizer ||= "address" if subcommand?(harness, "dummy")
      preload_sanitizer if @sanitizer
      return run_dummy(harness_args) if subcommand?(harness, "dummy")
      return run_test(harness_args) if subcommand?(harness, "run-test")

      run_harness(harness, harness_args)
    rescue UsageError, Ruzzy::Error => e
      @err.puts "ruzzy: #{e.message}"
      @err.puts "Run `ruzzy --help` for usage."
      EXIT_USAGE
    end

    private

    # Splits the command line into ruzzy's options, the harness and its args.
    # Returns nil for the harness when an option (--help, --version) said all.
    def parse
      until @argv.empty?
        arg = @argv.shift
        case arg
        when "-h", "--help"
          @out.write USAGE
          return nil
        when "-v", "--version"
          @out.puts "ruzzy #{VERSION}"
          return nil
        when "--list-detectors"
          @out.write "Bug detectors (on by default; --disable-detectors=NAME,... turns them off):\n", Detectors.listing
          return nil
        when "--" then break
        when /\A-/ then parse_option(arg)
        else return [arg, @argv]
        end
      end
      harness = @argv.shift or raise UsageError, "no harness given"
      [harness, @argv]
    end

    def parse_option(arg)
      case arg
      when /\A--(include|exclude)=(.+)\z/ then @coverage[Regexp.last_match(1).to_sym] << Regexp.last_match(2)
      when /\A--map-size=(.*)\z/ then @coverage[:map_size] = parse_map_size(Regexp.last_match(1))
      when "--no-coverage" then @coverage_enabled = false
      when "--no-compare-hooks" then ENV["RUZZY_COMPARE_HOOKS"] = "0"
      when "--no-literal-dict" then ENV["RUZZY_LITERAL_DICT"] = "0"
      when /\A--disable-detectors=(.+)\z/ then disable_detectors(Regexp.last_match(1))
      when /\A--ignore=(.+)\z/ then @ignore << ExpectedExceptions.from_command_line(Regexp.last_match(1))
      when /\A--sanitizer=(.*)\z/ then @sanitizer = Sanitizers.canonical(Regexp.last_match(1))
      when /\A-I(.+)\z/ then $LOAD_PATH.unshift(File.expand_path(Regexp.last_match(1)))
      when "-I" then $LOAD_PATH.unshift(File.expand_path(@argv.shift || raise(UsageError, "-I needs a directory")))
      else raise UsageError, "unknown option #{arg}"
      end
    end

    # Turns off the detectors named in +list+ ("all": every one), for the
    # harness's Ruzzy.fuzz and the processes libFuzzer starts.
    def disable_detectors(list)
      ENV["RUZZY_DISABLE_DETECTORS"] = list
      Detectors.default_setting
    end

    def parse_map_size(text)
      Integer(text, 10).tap { |n| raise ArgumentError unless n.between?(64, 1 << 26) }
    rescue ArgumentError
      raise UsageError, "--map-size takes a whole number from 64 to #{1 << 26}, got #{text.inspect}"
    end

    # Whether +harness+ is the subcommand +name+ (a file of that name wins).
    def subcommand?(harness, name)
      harness == name && !File.exist?(harness)
    end

    # The child side of `ruzzy cov` (internal): HARNESS INPUT_LIST STATUS DUMP FILTER_JSON.
    def replay_for_coverage(args)
      harness, list, status, dump, filter = args
      require "json"
      require "ruzzy"
      require_relative "cov/replayer"
      $PROGRAM_NAME = harness
      ARGV.clear
      inputs = File.readlines(list, chomp: true).map { |line| line.split("\t", 2).then { |i, p| [Integer(i), p] } }
      Cov::Replayer.new(harness: File.expand_path(harness), inputs:, status:, dump:,
                        filter: Cov.filter(JSON.parse(filter))).run
    end

    def run_test(args)
      file, name, *flags = args
      raise UsageError, "run-test needs a test file and the name of a fuzz test" unless file && name

      ENV[FuzzTest::ENV_FUZZ] = name
      run_harness(file, flags)
    end

    # Re-executes this command with the sanitizer preload in LD_PRELOAD,
    # unless it is there already. Returns only in the latter case.
    def preload_sanitizer
      preload = Sanitizers.path!(@sanitizer)
      return if Sanitizers.preloaded?(preload)

      $stdout.flush
      $stderr.flush
      exec(Sanitizers.preload_environment(preload), RbConfig.ruby, File.expand_path(@program), *@original_argv)
    end

    def run_dummy(args)
      $PROGRAM_NAME = "dummy"
      ARGV.replace(args)
      require "ruzzy"
      Ruzzy.dummy
      EXIT_OK
    end

    def run_harness(harness, harness_args)
      path = File.expand_path(harness)
      raise UsageError, "no such harness file: #{harness}" unless File.file?(path)

      $PROGRAM_NAME = harness
      ARGV.replace(harness_args)
      require "ruzzy"
      Ruzzy.command_line_ignore = @ignore
      Ruzzy::Coverage.start(**@coverage) if @coverage_enabled
      begin
        load path
      rescue SystemExit
        raise
      rescue Exception => e # rubocop:disable Lint/RescueException -- report anything the harness raises
        report_load_error(harness, e)
        return EXIT_HARNESS_ERROR
      end
      return EXIT_OK if Ruzzy.fuzz_called?

      wanted = ENV.fetch(FuzzTest::ENV_FUZZ, "")
      if wanted.empty?
        @err.puts "ruzzy: #{harness} finished without calling Ruzzy.fuzz; " \
                  "a harness ends with Ruzzy.fuzz(->(data) { ... })"
      else
        @err.puts "ruzzy: no fuzz test named #{wanted.inspect} in #{harness}"
      end
      EXIT_USAGE
    end

    def report_load_error(harness, error)
      @err.puts "ruzzy: #{harness} raised while loading, before fuzzing started:"
      @err.puts "#{error.class}: #{error.message}"
      (error.backtrace || []).each { |frame| @err.puts "    from #{frame}" }
    end
  end
end

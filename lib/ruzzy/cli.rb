# frozen_string_literal: true

# This file and every file of lib/ruzzy/cli/ stand on one floor (docs/architecture.md):
# May use: campaign, campaign_protocol, command_options, detectors, engine, error, exit_status, extensions,
# finding_kinds, findings, libfuzzer_args, native, own_files, ruzzy, sanitizers, settings, shown_duration, shown_path,
# test_frameworks, user_code, version, web.

require_relative "version"
require_relative "exit_status"
require_relative "sanitizers"
require_relative "findings/expected_exceptions"
require_relative "engine/relaunch"
require_relative "command_options"
require_relative "test_frameworks/fuzz_test"
require_relative "cli/ci"
require_relative "cli/oss_fuzz"
require_relative "cli/build_ext"
require_relative "cli/findings"
require_relative "cli/fuzz_test_commands"
require_relative "cli/preloads"
require_relative "campaign/supervisor"
require_relative "detectors"
require_relative "user_code"
require "rbconfig"

# The `ruzzy` command (CLI), and `ruzzy cov` (Cov) loaded when it runs.
module Ruzzy
  # The `ruzzy` command: `ruzzy [OPTIONS] HARNESS.rb [libFuzzer flags and corpus dirs]`.
  #
  # It loads the harness as the main program (so `$PROGRAM_NAME` is the
  # harness and `ARGV` holds everything after it, which is what
  # Ruzzy::DEFAULT_ARGS hands to libFuzzer) and lets the harness call
  # Ruzzy.fuzz. It loads ruzzy itself only after the command line is
  # understood, so DEFAULT_ARGS sees the harness's arguments.
  class CLI
    USAGE = <<~TEXT.freeze
      Usage: ruzzy [OPTIONS] HARNESS.rb [LIBFUZZER_FLAGS] [CORPUS_DIR | INPUT_FILE]...
             ruzzy [OPTIONS] dummy [LIBFUZZER_FLAGS]
             ruzzy [OPTIONS] run-test TEST_FILE NAME [LIBFUZZER_FLAGS]
             ruzzy [OPTIONS] convert TEST_FILE NAME INPUT... [--out=DIR]
             ruzzy [OPTIONS] rack APP [LIBFUZZER_FLAGS] [CORPUS_DIR | INPUT_FILE]...
             ruzzy ci [--seconds=N] [PATH...]
             ruzzy oss-fuzz-build HARNESS.rb... [--out=DIR] [-I DIR]... [--sanitizer=NAME]
             ruzzy build-ext GEM_OR_DIR [--install-dir=DIR] [--sanitizer=NAME] [-O LEVEL]
             ruzzy cov [-o REPORT_DIR] HARNESS.rb CORPUS...
             ruzzy findings [DIR] [show GROUP | replay [GROUP...] | minimise GROUP]

      Loads HARNESS.rb, which calls Ruzzy.fuzz(->(data) { ... }), and runs
      libFuzzer on it. Everything after HARNESS.rb goes to the harness as ARGV
      and, through Ruzzy::DEFAULT_ARGS, to libFuzzer. `ruzzy dummy` fuzzes
      ruzzy's bundled C extension under AddressSanitizer (an installation check).
      `ruzzy run-test` fuzzes one fuzz_test of a Minitest or RSpec file, writing
      into its corpus directory; `ruzzy ci` fuzzes all of them (ruzzy ci --help).
      `ruzzy convert` turns inputs of a typed fuzz test from bytes into
      `ruzzy fuzz v1` files and back, written into --out (default: the
      test's corpus directory). `ruzzy rack` fuzzes a web application in
      process, one request per input: APP is a config.ru, a Rails
      application's root directory or a Ruby file defining a Rack app
      (docs/web-apps.md).

      Options (before HARNESS.rb):
        --engine=NAME      libfuzzer (default) or libafl: LibAFL's
                           libFuzzer-compatible engine (docs/engines.md)
        --sanitizer=NAME   run with a sanitizer preloaded: address (asan) or
                           undefined (ubsan), for C extensions built with it
        --include=PATTERN  instrument only matching paths (repeatable)
        --exclude=PATTERN  do not instrument matching paths (repeatable)
        --map-size=N       edge counters (default: fitted to the code)
        -I DIRECTORY       add DIRECTORY to the load path (like ruby -I)
        --no-coverage      do not instrument Ruby code (blind fuzzing)
        --quiet-coverage   stop counting the coverage of methods that find
                           nothing new for 10 s (experimental;
                           RUZZY_QUIET_COVERAGE=SECONDS)
        --no-compare-hooks do not report comparisons to libFuzzer
        --no-literal-dict  do not give libFuzzer the literals of the code as a
                           dictionary
        --disable-detectors=NAME[,NAME...]
                           turn off bug detectors (all: every one)
        --list-detectors   list the bug detectors and exit
        --keep-going       a campaign: record every finding, grouped, and go on
                           until -max_total_time (or Ctrl-C); exit #{EXIT_FINDING} at the
                           end if anything was found (ruzzy findings --help)
        --findings=DIR     where --keep-going files findings (implies it;
                           default #{DEFAULT_FINDINGS_DIR})
        --workers=N        a campaign's processes fuzzing at once on one
                           corpus (default: #{CommandOptions.default_workers_text})
        --session=N        ruzzy rack: each input is up to N requests (1-8),
                           cookies, CSRF token and ids carried between them
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

      Exit status: #{EXIT_OK} when the run ends without a finding, #{EXIT_FINDING} after a finding
      (libFuzzer's -error_exitcode; sanitizer reports too), #{EXIT_INTERRUPTED} when
      interrupted, #{EXIT_HARNESS_ERROR} when the harness raises while loading, #{EXIT_USAGE} for usage errors,
      #{EXIT_INTERNAL_ERROR} for an internal error in ruzzy itself (no crash file).
    TEXT

    include FuzzTestCommands

    # The commands that load a harness of their own, by word.
    HARNESS_COMMANDS = { "dummy" => :run_dummy, "run-test" => :run_test, "convert" => :run_convert,
                         "rack" => :run_rack }.freeze
    include Preloads

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
      @engine = nil
      @session = { ignore: [] }
      @findings_dir = @workers = @rack_session = nil
    end

    # Runs the command; returns the process exit status.
    def run
      harness, harness_args = parse
      return EXIT_OK unless harness

      command = subcommand(harness, harness_args)
      return command.run if command

      CommandOptions.warn_misplaced(options { nil }, harness_args, @err)
      return run_campaign(harness, harness_args) if @findings_dir

      @sanitizer ||= "address" if subcommand?(harness, "dummy")
      preload_engine if @engine
      preload_sanitizer if @sanitizer
      command = HARNESS_COMMANDS.find { |word, _| subcommand?(harness, word) }&.last
      command ? send(command, harness_args) : run_harness(harness, harness_args)
    rescue UsageError, Ruzzy::Error => e
      @err.puts CommandOptions.said(e)
      @err.puts "Run `ruzzy --help` for usage."
      EXIT_USAGE
    end

    private

    # Splits the command line into ruzzy's options, the harness and its args.
    # Returns nil for the harness when an option (--help, --version) said all.
    def parse
      listing = false
      parser = options { listing = true }
      return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE, in_order: true)
      return list_detectors if listing

      @argv.shift if @argv.first == "--"
      harness = @argv.shift or raise UsageError, "no harness given"
      raise UsageError, "--workers is for a campaign (--keep-going)" if @workers && !@findings_dir

      [harness, @argv]
    end

    # ruzzy's own options; +listing+ is called for --list-detectors.
    def options(&)
      parser = CommandOptions.parser("ruzzy")
      parser.on("--list-detectors", &)
      CommandOptions.coverage_patterns(parser, @coverage)
      CommandOptions.map_size(parser) { |size| @coverage[:map_size] = size }
      parser.on("--no-coverage") { @coverage_enabled = false }
      parser.on("--[no-]quiet-coverage") { |on| ENV[Settings::QUIET_COVERAGE] = on ? Settings::QUIET_SECONDS : "0" }
      parser.on("--no-compare-hooks") { @session[:compare_hooks] = false }
      parser.on("--no-literal-dict") { @session[:literal_dict] = false }
      parser.on("--disable-detectors=NAMES") do |list|
        @session[:detectors] = Detectors.without(list.split(","), "--disable-detectors")
      end
      campaign_options(parser)
      parser.on("--ignore=SPEC") { |spec| @session[:ignore] << ExpectedExceptions.from_command_line(spec) }
      CommandOptions.sanitizer(parser) { |name| @sanitizer = name }
      parser.on("--engine=NAME") { |name| @engine = Engine::Choice.canonical(name) }
      CommandOptions.load_path(parser) { |dir| $LOAD_PATH.unshift(dir) }
      parser
    end

    # The options of a campaign, and of what a worker fuzzes.
    def campaign_options(parser)
      parser.on("--keep-going") { @findings_dir ||= DEFAULT_FINDINGS_DIR }
      parser.on("--findings=DIR") { |dir| @findings_dir = dir }
      CommandOptions.workers(parser) { |count| @workers = count }
      CommandOptions.session(parser) { |count| @rack_session = count }
    end

    def list_detectors
      @out.write "Bug detectors (on by default; --disable-detectors=NAME,... turns them off):\n", Detectors.listing
      nil
    end

    # The command object of the subcommand +word+ (ci, cov, ...) with
    # +args+, or nil when +word+ is a harness.
    def subcommand(word, args)
      io = { out: @out, err: @err }
      if subcommand?(word, "ci") then CI.new(args, **io, program: @program)
      elsif subcommand?(word, "oss-fuzz-build") then OssFuzz.new(args, **io)
      elsif subcommand?(word, "build-ext") then BuildExt.new(args, **io)
      elsif subcommand?(word, "cov") then Cov::Command.new(args, **io, sanitizer: @sanitizer, program: @program)
      elsif subcommand?(word, "findings") then Findings::Command.new(args, **io)
      end
    end

    # Whether +harness+ is the subcommand +name+ (a file of that name wins).
    def subcommand?(harness, name)
      harness == name && !File.exist?(harness)
    end

    # `ruzzy --keep-going`: a supervisor runs the harness in workers with
    # the same options (see Campaign::Supervisor).
    def run_campaign(harness, harness_args)
      before_harness = @original_argv.first(@original_argv.size - harness_args.size - 1)
      target = campaign_target(harness, harness_args)
      Campaign::Supervisor.new(dir: @findings_dir, options: worker_options(before_harness), target:,
                               args: harness_args, program: @program, out: @err, workers: @workers,
                               ruby_options: Relaunch.interpreter_options(@program, @original_argv)).run
    end

    # ruzzy's options for a campaign's worker: the campaign's own left out.
    def worker_options(words)
      %w[--findings --workers].reduce(words - %w[-- --keep-going]) { |kept, name| Relaunch.without_option(kept, name) }
    end

    # Loads the harness +harness+ (or, for `ruzzy rack`, the Rack app
    # +app+) as the main program with +harness_args+ as ARGV.
    def run_harness(harness, harness_args, app: nil)
      path = File.expand_path(harness)
      raise UsageError, "no such harness file: #{harness}" unless app || File.file?(path)

      $PROGRAM_NAME = harness
      ARGV.replace(harness_args)
      require "ruzzy"
      @session.each { |setting, value| Ruzzy.session.public_send(:"#{setting}=", value) }
      Ruzzy::Coverage.start(**@coverage) if @coverage_enabled
      UserCode.watch(app ? Web::AppLoader.root_file(app) : path, include: @coverage[:include], libraries: !app)
      begin
        app ? Web::AppLoader.fuzz(app, session: @rack_session || 1) : load(path)
      rescue SystemExit
        raise
      rescue Exception => e # rubocop:disable Lint/RescueException -- report anything the harness raises
        report_load_error(harness, e)
        return EXIT_HARNESS_ERROR
      end
      return EXIT_OK if Ruzzy.session.fuzz_called?

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
      (Extensions::Check.load_error_hint(error) || Web::AppLoader.load_error_hint(error))&.then do |hint|
        @err.puts "ruzzy: #{hint}"
      end
    end
  end

  # `ruzzy cov` is loaded only for itself: its report needs CGI, which a
  # harness may fuzz, and a library loaded before coverage starts is never
  # instrumented (test_coverage.rb).
  autoload :Cov, File.expand_path("cli/cov", __dir__)
end

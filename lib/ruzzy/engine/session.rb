# frozen_string_literal: true

# Every file of lib/ruzzy/engine/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: campaign_protocol, default_args, detectors, error, extensions, feedback, findings, gen,
# libfuzzer_args, native, own_files, platforms, sanitizers, settings, user_code.

require "digest/sha1"
require "shellwords"
require_relative "../libfuzzer_args"
require_relative "relaunch"
require_relative "../findings/expected_exceptions"
require_relative "../findings/store"
require_relative "../campaign_protocol"
require_relative "hang_watch"
require_relative "../extensions/loaded_check"
require_relative "../engine/choice"
require_relative "../settings"
require_relative "../default_args"
require_relative "../findings/report"
require_relative "../findings/context"
require_relative "../feedback/coverage"
require_relative "../feedback/compare_hooks"
require_relative "../feedback/literal_dictionary"
require_relative "../detectors"
require_relative "../gen/typed_target"

module Ruzzy
  # The fuzzing run of this process (there is at most one: libFuzzer runs
  # once per process), behind Ruzzy.fuzz.
  #
  # Whoever starts the process configures it before the harness runs: the
  # `ruzzy` command from its options (--no-compare-hooks, --ignore, ...),
  # `ruzzy cov` by capturing the target instead of fuzzing it. Its settings
  # are the defaults of Ruzzy.fuzz's keywords; the environment
  # (RUZZY_COMPARE_HOOKS, RUZZY_LITERAL_DICT, RUZZY_DISABLE_DETECTORS)
  # gives theirs. As fuzzing starts, it hands Findings what reports need
  # (Findings::Context): the findings directory, the expected exceptions,
  # where artifacts go, the command that starts the harness again.
  class Session
    # Ruzzy.fuzz's compare_hooks:, literal_dict: and detectors: defaults.
    attr_accessor :compare_hooks, :literal_dict, :detectors

    # Exceptions every fuzz target of the run may raise on purpose
    # (`ruzzy --ignore`), added to Ruzzy.fuzz's ignore:.
    attr_reader :ignore

    # The findings directory of the campaign this process works for
    # (Findings::Store), or nil: then a finding ends the run.
    attr_reader :findings

    # What a finding's report says of its input, beside the input's file:
    # a callable given the input (bytes; nil for a typed target's shrunk
    # arguments, which have none) and what it raised, that returns text
    # (Ruzzy.fuzz_rack shows the requests as curl and as a test) or nil;
    # or nil. Read when fuzzing starts (Findings::Context).
    attr_accessor :input_description

    # A fuzz target taken instead of fuzzed (see #capture).
    Capture = Struct.new(:target, :expected)

    def initialize
      @compare_hooks = CompareHooks.environment_setting
      @literal_dict = LiteralDictionary.environment_setting
      @detectors = Detectors.environment_setting
      @ignore = ExpectedExceptions.new(nil)
      @expected = nil
      @libfuzzer_args = nil
      @capturing = false
      @fuzz_called = false
      findings_dir = ENV.fetch(Campaign::ENV_FINDINGS_DIR, "")
      @findings = findings_dir.empty? ? nil : Findings::Store.new(findings_dir)
    end

    # Sets exceptions every target may raise (specs as for ignore:).
    def ignore=(specs)
      @ignore = ExpectedExceptions.new(specs)
    end

    # Fuzzes +target+ (see Ruzzy.fuzz, which documents every keyword).
    def fuzz(target, args, compare_hooks:, ignore:, mutator:, crossover:, literal_dict:, detectors:)
      raise InvalidTargetError, "the fuzz target must respond to #call, got #{target.inspect}" unless callable?(target)

      { mutator:, crossover: }.each do |name, callable|
        next if callable.nil? || callable?(callable)

        raise InvalidArgumentsError, "#{name}: must respond to #call, got #{callable.inspect}"
      end
      hook_groups = CompareHooks.groups(compare_hooks)
      detectors = Detectors.select(detectors)
      args = LibFuzzerArgs.validate(args).with_defaults(DEFAULT_FLAGS + Sanitizers.leak_flags)
      @expected = ExpectedExceptions.new(ignore) + @ignore
      throw(:ruzzy_capture_target, Capture.new(target, @expected)) if @capturing

      args = engine_args(args)
      @libfuzzer_args = args
      args = args.with_program(command_line) if args.program == $PROGRAM_NAME
      args = prepare(args, hook_groups, detectors, literal_dict)
      @fuzz_called = true
      Findings.context = findings_context
      start_watches(args)
      run_driver(target, args, mutator, crossover)
    end

    # Runs the block (which loads a harness); the harness's Ruzzy.fuzz call
    # hands its target over instead of fuzzing. Returns a Capture, or nil
    # when the block never called Ruzzy.fuzz. Used by `ruzzy cov`.
    def capture
      @capturing = true
      catch(:ruzzy_capture_target) do
        yield
        nil
      end
    ensure
      @capturing = false
    end

    # Whether the engine writes the artifact of a finding itself (libFuzzer
    # does; LibAFL's runtime names them its own way).
    def engine_writes_artifacts?
      @engine != "libafl"
    end

    # Whether Ruzzy.fuzz has started fuzzing in this process.
    def fuzz_called?
      @fuzz_called
    end

    # The exceptions the running fuzz target may raise.
    def expected_exceptions
      @expected || @ignore
    end

    # libFuzzer's -timeout of this run, in seconds.
    def timeout
      (@libfuzzer_args || LibFuzzerArgs.new(DEFAULT_ARGS)).timeout
    end

    # The shell command that starts this harness again (libFuzzer's argv[0]).
    def command_line
      Relaunch.shell(Relaunch.prefix(DEFAULT_ARGS.drop(1)))
    end

    # The command that minimises a finding: libFuzzer's -minimize_crash,
    # so under LibAFL the same command on the libfuzzer engine.
    def minimise_command_line
      return command_line if engine_writes_artifacts?

      words = Relaunch.without_option(Relaunch.prefix(DEFAULT_ARGS.drop(1)), "--engine")
      "#{Engine::Choice::ENV_NAME}=#{Engine::Choice::DEFAULT} #{Relaunch.shell(words)}"
    end

    private

    # What Findings needs of this run to report its findings.
    def findings_context
      Findings::Context.new(store: @findings, expected: expected_exceptions, input_description:,
                            libfuzzer_args: @libfuzzer_args, engine_writes_artifacts: engine_writes_artifacts?,
                            command_line:, minimise_command_line:, hang_watch: Engine::HangWatch)
    end

    def callable?(object)
      object.respond_to?(:call)
    end

    # libFuzzer's arguments for the engine that runs: RUZZY_ENGINE=libafl
    # without LibAFL's runtime loaded starts the process again with it
    # preloaded; under LibAFL the arguments are translated and ruzzy ends
    # the run at -runs and -max_total_time itself.
    def engine_args(args)
      @engine = Ruzzy::Native._engine_kind
      relaunch_with_libafl if @engine != "libafl" && Engine::Choice.from_environment == "libafl"
      return args unless @engine == "libafl"

      args, runs, seconds, rss_limit_mb = Engine::Choice.for_libafl(args)
      Ruzzy::Native._set_run_limits(runs, seconds, rss_limit_mb)
      args
    end

    def relaunch_with_libafl
      environment = Engine::Choice.libafl_environment
      if Relaunch::ORIGINAL_WORDS.empty?
        raise EngineUnavailableError,
              "cannot start this process again with LibAFL's runtime preloaded (/proc/self/cmdline is unreadable): " \
              "run it with LD_PRELOAD=#{Engine::Choice.libafl_path!} #{Engine::Choice::ENV_NAME}=libafl"
      end

      Relaunch.exec_ruby(environment, Relaunch::ORIGINAL_WORDS.drop(1))
    end

    # The threads that watch the running input: the hang watch, which also
    # looks at the running regexp match for the redos detector, or that
    # detector's own watch when there is no hang watch (-timeout=0). A
    # process that runs children instead of the target watches nothing.
    def start_watches(args)
      return if args.runs_children?

      looks = Detectors::ReDoS.watching? ? [Detectors::ReDoS.method(:look)] : []
      watched = Engine::HangWatch.start(args.timeout, findings: @findings, looks:)
      Detectors::ReDoS.watch_alone unless watched
    end

    # Prepares coverage, comparison hooks, the dictionary and the bug
    # detectors for fuzzing; returns libFuzzer's arguments with the
    # dictionary.
    def prepare(args, hook_groups, detectors, literal_dict)
      CompareHooks.install(hook_groups) unless hook_groups.empty?
      Coverage.fit_map(fuzzing: args.replay_files.empty?)
      Coverage.stop_interpreter_branch_counts
      Coverage.quiet unless args.runs_children? || args.reads_coverage?
      LiteralDictionary.stop
      args = LiteralDictionary.add_to(args, numbers: @engine == "libafl") if literal_dict && !hook_groups.empty?
      Detectors.install(detectors, replaying: !args.replay_files.empty?)
      clear_stack_poisoning_on_raise
      Extensions::LoadedCheck.warnings.each { |line| warn line }
      configure_reproduction(args)
      args
    end

    # Hands the native crash reports (segfaults, timeouts, sanitizer
    # reports) what their Reproduce and Minimise lines need.
    def configure_reproduction(args)
      files = args.input_files.map { |path| [Digest::SHA1.file(path).hexdigest, Shellwords.escape(path)] }
      exact = args.value("exact_artifact_path")
      Ruzzy::Native._configure_reproduction(command_line, minimise_command_line,
                                            Shellwords.escape(args.value("artifact_prefix") || "./"),
                                            exact && Shellwords.escape(exact), files, OWN_FILES,
                                            Findings::Report::DEDUP_FRAMES)
    end

    public

    # Under AddressSanitizer, clears the stack poisoning that Ruby's longjmp
    # leaves behind whenever Ruby raises, on a thread's stack or a fiber's,
    # and what a fiber abandoned inside sanitized C frames leaves on the
    # stack Ruby gives the next fiber (see
    # ext/ruzzy/src/findings/sanitizer_stack.rs; the fuzzing callback
    # clears what a `break` or `throw` leaves). Fuzzing arranges it;
    # `ruzzy cov`'s replay calls it too.
    def clear_stack_poisoning_on_raise
      return unless Ruzzy::Native._asan_present? && ENV.fetch(Settings::ASAN_RAISE_HOOK, "1") != "0"

      @raise_tracepoint ||= TracePoint.new(:raise) { Ruzzy::Native._clear_stack_poisoning }.tap(&:enable)
      fiber_stack = RubyVM::DEFAULT_PARAMS.fetch(:fiber_machine_stack_size, 512 << 10)
      @fiber_tracepoint ||= TracePoint.new(:fiber_switch) { Ruzzy::Native._clear_fiber_stack(fiber_stack) }
                                      .tap(&:enable)
      warn "INFO: ruzzy: AddressSanitizer present: clearing stack poisoning when Ruby raises"
    end

    private

    # A typed target's inputs are mutated by the shape of its arguments
    # (unless a custom mutator is given).
    def run_driver(target, args, mutator, crossover)
      schema = target.arguments.schema if target.is_a?(Gen::TypedTarget)
      status = Ruzzy::Native._fuzz(target, args, !@expected.empty?, mutator, crossover, schema)
      # The driver returns only in modes that do not fuzz in this process
      # (-help=1, -jobs/-workers); a failed job ends the process the same
      # way a finding does.
      exit(status) unless status.zero?
      status
    end
  end
end

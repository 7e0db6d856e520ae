# frozen_string_literal: true

# Every file of lib/ruzzy/test_frameworks/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: campaign_protocol, findings, gen, libfuzzer_args, ruzzy, web.

require "fileutils"
require_relative "../campaign_protocol"
require_relative "../libfuzzer_args"
require_relative "../findings/expected_exceptions"
require_relative "../gen"
require_relative "../web"
require_relative "typed_fuzz_test"

module Ruzzy
  # Fuzz tests inside test suites (the framework-neutral half of
  # ruzzy/minitest and ruzzy/rspec).
  #
  # A fuzz test is a name and a block taking one input. It has a corpus
  # directory, by default `fuzz/<slug>/` beside the test file (so
  # test/fuzz/<slug>/ or spec/fuzz/<slug>/). It runs in one of three modes:
  #
  # replay (ordinary test runs):: every file in the corpus directory,
  #   crash files included, is one test example; no libFuzzer.
  # fuzz (`ruzzy run-test FILE NAME`):: the block is fuzzed with coverage;
  #   new corpus entries and crash files are written into the directory, so
  #   the next ordinary run replays them. Given input files, it runs them
  #   and writes nothing there.
  # list (`ruzzy ci`):: the test file only announces its fuzz tests.
  # convert (`ruzzy convert FILE NAME INPUT...`):: a typed test's inputs
  #   are turned from bytes into regression files and back.
  module FuzzTest
    # A fuzz test's definition.
    Definition = Struct.new(:name, :file, :corpus, :expected, :arguments, :block, keyword_init: true) do
      def slug
        FuzzTest.slug(name)
      end
    end

    # Raised by a replayed input that makes the block raise: names the input
    # file, keeps the original backtrace.
    class InputFailure < StandardError; end

    ENV_FUZZ = "RUZZY_FUZZ"
    ENV_LIST = "RUZZY_FUZZ_LIST"
    # `ruzzy convert`: where converted inputs go ("." for the corpus
    # directory).
    ENV_CONVERT = "RUZZY_FUZZ_CONVERT"
    # The last field of a typed fuzz test's FUZZ_TEST line (else "bytes").
    TYPED = "typed"

    module_function

    # "Parses any document" -> "parses_any_document".
    def slug(name)
      slug = name.to_s.downcase.gsub(/[^a-z0-9]+/, "_").gsub(/\A_+|_+\z/, "")
      slug.empty? ? "fuzz" : slug
    end

    # Builds a definition for a fuzz test declared in +file+; with
    # +generators+ (Ruzzy::Gen), a typed one whose block takes one value of
    # each.
    def define(name, *generators, file:, corpus: nil, ignore: [], &block)
      raise ArgumentError, "fuzz_test #{name.inspect} needs a block taking the input" unless block

      base = File.dirname(File.expand_path(file))
      dir = corpus ? File.expand_path(corpus, base) : File.join(base, "fuzz", slug(name))
      arguments = Gen::Arguments.new(generators, "fuzz_test #{name.inspect}") unless generators.empty?
      Definition.new(name: name.to_s, file: File.expand_path(file), corpus: dir,
                     expected: ExpectedExceptions.new(ignore), arguments:, block:)
    end

    # :replay, :fuzz, :convert or :list.
    def mode
      return :list if ENV[ENV_LIST] == "1"
      return :convert if ENV.fetch(ENV_CONVERT, "") != "" && ENV.fetch(ENV_FUZZ, "") != ""
      return :fuzz if ENV.fetch(ENV_FUZZ, "") != ""

      :replay
    end

    # Whether +definition+ is the one `ruzzy run-test` asked for.
    def selected?(definition)
      wanted = ENV.fetch(ENV_FUZZ, "")
      [definition.name, definition.slug].include?(wanted)
    end

    # The corpus files of +definition+, sorted (an empty list when the
    # directory does not exist yet).
    def inputs(definition)
      return [] unless File.directory?(definition.corpus)

      names = Dir.children(definition.corpus).reject { |name| name.start_with?(".") }
      paths = names.sort.map { |name| File.join(definition.corpus, name) }
      paths.select { |path| File.file?(path) }
    end

    # The inputs to replay as examples: each corpus file, or nil (the empty
    # input) when there is none yet.
    def replay_cases(definition)
      inputs = inputs(definition)
      inputs.empty? ? [nil] : inputs
    end

    # Runs the block on the input in +path+ (nil: the empty input), in the
    # context of +receiver+ (the test, so its assertions work). An expected
    # exception passes; any other is re-raised as InputFailure naming the file.
    def replay(definition, path, receiver)
      receiver.instance_exec(*replay_arguments(definition, path), &definition.block)
    rescue RegressionFileError
      raise
    rescue *ExpectedExceptions::FINDINGS => e
      return if definition.expected.include?(e)

      failure = InputFailure.new("fuzz input #{path || "(empty input)"}: #{e.class}: #{e.message}")
      failure.set_backtrace(e.backtrace)
      raise failure
    end

    # What the block of +definition+ gets for the input in +path+ (nil: the
    # empty input): the bytes, or a typed test's values (a regression file
    # parsed, any other file decoded).
    def replay_arguments(definition, path)
      arguments = definition.arguments
      return [path ? File.binread(path) : "".b] unless arguments

      arguments.values(path ? arguments.read_file(path) : arguments.decode(""))
    end

    # Fuzzes +definition+ (never returns): corpus and artifacts go to its
    # directory; libFuzzer flags come from the command line. The block runs
    # in +receiver+ (a test instance, so assertions work). Input files on
    # the command line are run instead (a finding replayed).
    def fuzz!(definition, receiver)
      require "ruzzy"
      FileUtils.mkdir_p(definition.corpus)
      $stderr.write(Campaign.corpus_line(definition.corpus)) if ENV.key?(Campaign::ENV_FINDINGS_DIR)
      return TypedFuzzTest.fuzz!(definition, receiver) if definition.arguments

      given = Ruzzy::DEFAULT_ARGS.drop(1)
      block = definition.block
      target = lambda do |data|
        receiver.instance_exec(data, &block)
        nil
      end
      Ruzzy.fuzz(target, fuzz_args(definition, given, "#{definition.corpus}/"), ignore: definition.expected.to_specs)
    end

    # libFuzzer's arguments for fuzzing +definition+ with the command
    # line's +given+ ones: artifacts named by +artifact_prefix+, and the
    # corpus directory. A run of input files (a finding replayed, or
    # minimised) gets neither: it must never write into the corpus, where
    # libFuzzer would put -minimize_crash's smaller inputs and the ordinary
    # test run would replay each; they go where -artifact_prefix says, "./"
    # by default, as for any harness.
    def fuzz_args(definition, given, artifact_prefix)
      return [$PROGRAM_NAME, *given] if replaying?(given)

      [$PROGRAM_NAME, "-artifact_prefix=#{artifact_prefix}", *given, definition.corpus]
    end

    # Whether the command line's +given+ words name input files to run
    # (every word that is not a flag is a file), as libFuzzer then runs
    # them instead of fuzzing.
    def replaying?(given)
      LibFuzzerArgs.new([$PROGRAM_NAME, *given]).replay_files.any?
    end

    # Prints "FUZZ_TEST<TAB>name<TAB>file<TAB>typed|bytes" for `ruzzy ci`
    # and makes sure the test framework does not run the tests afterwards.
    def announce(definition)
      $stdout.puts "FUZZ_TEST\t#{definition.name}\t#{definition.file}\t#{definition.arguments ? TYPED : "bytes"}"
      $stdout.flush
      return if @skip_tests_at_exit

      @skip_tests_at_exit = true
      at_exit { exit!(0) }
    end

    # The framework-neutral part of `fuzz_test`, called by it (the test file
    # is its caller's caller). In an ordinary run, yields (definition, path)
    # for each replay example the framework should define (see
    # replay_cases); otherwise lists or fuzzes the test. +receiver+ builds
    # the object +body+ runs in when fuzzing.
    def declare(name, generators, corpus:, ignore:, receiver:, body:)
      file = caller_locations(2, 1).first.absolute_path
      definition = define(name, *generators, file:, corpus:, ignore:, &body)
      case mode
      when :list then announce(definition)
      when :fuzz then fuzz!(definition, receiver.call) if selected?(definition)
      when :convert then TypedFuzzTest.convert!(definition, ENV.fetch(ENV_CONVERT)) if selected?(definition)
      else replay_cases(definition).each { |path| yield definition, path }
      end
      nil
    end
  end
end

# frozen_string_literal: true

require_relative "../command_options"
require_relative "../exit_status"
require_relative "../test_frameworks/fuzz_test"
require_relative "../web/app_loader"

module Ruzzy
  class CLI
    # The commands that load a harness other than a file given: `ruzzy
    # dummy`, those that
    # drive one fuzz_test of a Minitest or RSpec file (each selects the
    # test through the environment, which Ruzzy::FuzzTest reads while the
    # file loads, and loads the file as a harness), and `ruzzy rack`.
    module FuzzTestCommands
      private

      # What a campaign's workers run for +harness+: the harness's path, or
      # a command's word and what it names (taken from +harness_args+).
      def campaign_target(harness, harness_args)
        raise UsageError, "--keep-going fuzzes a harness, not #{harness}" if subcommand?(harness, "dummy")
        return ["rack", File.expand_path(rack_app(harness_args.shift))] if subcommand?(harness, "rack")

        target = [harness]
        if subcommand?(harness, "run-test")
          target += harness_args.shift(2).map { |word| File.exist?(word) ? File.expand_path(word) : word }
        end
        raise UsageError, "no such harness file: #{target[-2] || harness}" unless File.file?(target[-2] || harness)

        target
      end

      # `ruzzy dummy [LIBFUZZER_FLAGS]`: ruzzy's bundled C extension.
      def run_dummy(args)
        $PROGRAM_NAME = "dummy"
        ARGV.replace(args)
        require "ruzzy"
        Ruzzy.dummy
        EXIT_OK
      end

      # `ruzzy rack APP [LIBFUZZER_FLAGS]`: fuzzes the Rack app APP, with
      # coverage of the app's own files unless --include says where.
      def run_rack(args)
        app, *flags = args
        app = File.expand_path(rack_app(app))
        if @coverage[:include].empty?
          patterns = Web::AppLoader.coverage_patterns(app)
          @coverage[:include] += patterns[:include]
          @coverage[:exclude] += patterns[:exclude]
          @err.puts "INFO: ruzzy rack: coverage of the app's own files (#{patterns[:include].first}); " \
                    "--include=/ traces the framework's too"
        end
        run_harness("rack", flags, app:)
      end

      # +app+ (ruzzy rack's APP), checked.
      def rack_app(app)
        raise UsageError, "rack needs an app: a config.ru, a Rails root directory or a Ruby file" unless app
        raise UsageError, "no such app: #{app}" unless File.exist?(app)

        app
      end

      # `ruzzy run-test TEST_FILE NAME [LIBFUZZER_FLAGS]`: fuzzes the test.
      def run_test(args)
        file, name, *flags = args
        raise UsageError, "run-test needs a test file and the name of a fuzz test" unless file && name

        ENV[FuzzTest::ENV_FUZZ] = name
        run_harness(file, flags)
      end

      # `ruzzy convert TEST_FILE NAME INPUT... [--out=DIR]`: converts a typed
      # test's inputs (see FuzzTest::TypedFuzzTest.convert!).
      def run_convert(args)
        out, args = args.partition { |word| word.start_with?("--out=") }
        file, name, *inputs = args
        unless file && name && !inputs.empty?
          raise UsageError, "convert needs a test file, the name of a typed fuzz test and input files"
        end

        ENV[FuzzTest::ENV_FUZZ] = name
        ENV[FuzzTest::ENV_CONVERT] = out.empty? ? "." : File.expand_path(out.last.delete_prefix("--out="))
        @coverage_enabled = false
        run_harness(file, inputs)
      end
    end
  end
end

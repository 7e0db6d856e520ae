# frozen_string_literal: true

require_relative "command_options"
require_relative "../test_frameworks/fuzz_test"

module Ruzzy
  class CLI
    # The commands that drive one fuzz_test of a Minitest or RSpec file:
    # each selects the test through the environment (Ruzzy::FuzzTest reads
    # it while the file loads) and loads the file as a harness.
    module FuzzTestCommands
      private

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

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/exit_status"

# The search-budget tests of TestMigration: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestMigrationSearch < Minitest::Test
  # The two-script pattern of Ruzzy 0.8's README, word for word in style:
  # single quotes, `return 0`, a bare `raise`.
  TRACER = <<~RUBY
    # frozen_string_literal: true

    require 'ruzzy'

    Ruzzy.trace('test_harness.rb')
  RUBY

  HARNESS = <<~RUBY
    # frozen_string_literal: true

    require 'ruzzy'

    def fuzzing_target(input)
      if input.length == 4
        if input[0] == 'F'
          if input[1] == 'U'
            if input[2] == 'Z'
              if input[3] == 'Z'
                raise
              end
            end
          end
        end
      end
    end

    test_one_input = lambda do |data|
      fuzzing_target(data) # Your fuzzing target would go here
      return 0
    end

    Ruzzy.fuzz(test_one_input)
  RUBY

  def write_pair(dir)
    File.write(File.join(dir, "test_tracer.rb"), TRACER)
    File.write(File.join(dir, "test_harness.rb"), HARNESS)
  end

  def assert_found_fuzz(dir, result)
    assert_exit Ruzzy::EXIT_FINDING, result
    assert_match(/RuntimeError: unhandled exception\n\s+from .*test_harness\.rb:\d+:in .*fuzzing_target/,
                 result.stderr)
    crashes = artifacts(dir)
    assert_equal 1, crashes.size, result.stderr
    assert_equal "FUZZ", File.binread(File.join(dir, crashes.first))
  end

  def test_tracer_and_harness_run_with_plain_ruby
    in_tmpdir do |dir|
      write_pair(dir)
      result = ruby("test_tracer.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_found_fuzz(dir, result)
    end
  end

  # 0.8's README command: LD_PRELOAD=$(ruby -e '...; print Ruzzy::ASAN_PATH') ruby test_tracer.rb
  def test_tracer_and_harness_run_under_the_asan_preload_as_0_8_documented
    prerequisite!(sanitizers_built?, "the sanitizer preloads were not built (clang missing at gem install)")
    in_tmpdir do |dir|
      write_pair(dir)
      preload = ruby("-e", 'require "ruzzy"; print Ruzzy::ASAN_PATH').stdout
      result = ruby("test_tracer.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir,
                                                                             env: { "LD_PRELOAD" => preload })
      assert_found_fuzz(dir, result)
      assert_match(/using the preloaded libFuzzer in .*asan_with_fuzzer\.so/, result.stderr)
    end
  end
end

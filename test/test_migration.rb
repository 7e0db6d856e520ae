# frozen_string_literal: true

require_relative "test_helper"
require "ruzzy"

# A Ruzzy 0.8 user's files and commands, copied as they were written for
# 0.8, run unchanged (docs/migrating-from-ruzzy.md).
class TestMigration < Minitest::Test
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
    search_test!
    in_tmpdir do |dir|
      write_pair(dir)
      result = ruby("test_tracer.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_found_fuzz(dir, result)
    end
  end

  # 0.8's README command: LD_PRELOAD=$(ruby -e '...; print Ruzzy::ASAN_PATH') ruby test_tracer.rb
  def test_tracer_and_harness_run_under_the_asan_preload_as_0_8_documented
    search_test!
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

  # A harness built on Ruzzy 0.8's FuzzedDataProvider, replaying a corpus
  # file saved under 0.8, takes the same branch: the values decode the same.
  def test_a_0_8_corpus_file_takes_the_same_path
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        require 'ruzzy/fuzzed_data_provider'
        Ruzzy.fuzz(lambda do |data|
          fdp = Ruzzy::FuzzedDataProvider.new(data)
          kind = fdp.consume_int(2)
          size = fdp.consume_uint(1)
          name = fdp.consume_random_length_string(size)
          raise "reached kind=\#{kind} name=\#{name}" if kind == -2 && name == 'ok'
          0
        end)
      RUBY
      # Under 0.8: consume_int(2) reads "\\xFF\\xFE" as -2, consume_uint(1)
      # reads 2 (the bytes at the end, last byte least significant).
      File.binwrite(File.join(dir, "saved-by-0.8"), "ok\x02\xFF\xFE".b)
      result = ruzzy("harness.rb", "saved-by-0.8", chdir: dir)
      assert_exit Ruzzy::EXIT_FINDING, result
      assert_match(/reached kind=-2 name=ok/, result.stderr)
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"

# A Ruzzy 0.8 user's files and commands, copied as they were written for
# 0.8, run unchanged (docs/migrating-from-ruzzy.md).
class TestMigration < Minitest::Test
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

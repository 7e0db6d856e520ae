# frozen_string_literal: true

require_relative "../test_helper"

# ruzzy fuzzing its own regexp model against Ruby's Regexp
# (test/fuzz_targets/regexp_model.rb): a fixed, seeded budget in which no
# difference, and no panic, may be found.
class TestRegexpModel < Minitest::Test
  TARGET = File.join(ROOT, "test", "fuzz_targets", "regexp_model.rb")

  def test_the_model_never_misses_a_match_that_ruby_finds
    in_tmpdir do |dir|
      result = ruzzy(TARGET, "-seed=1", "-runs=#{runs(300_000)}", "-max_total_time=150", "-max_len=96", chdir: dir)
      assert_exit 0, result
      assert_match(/Done \d+ runs/, result.stderr)
    end
  end
end

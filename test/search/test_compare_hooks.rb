# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestCompareHooks: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestCompareHooksSearch < Minitest::Test
  { "magic_string" => "magic string", "case_when" => "magic word", "chained_bytes" => "six bytes",
    "magic_integer" => "magic integer", "regex_token" => "token", "float_constant" => "float constant",
    "integer_text" => "magic number", "scanner_keyword" => "keyword",
    "date_token" => "christmas", "array_member" => "magic member", "record_checksum" => "record checksum",
    "checksum" => "checksum", "chunk_crc" => "chunk crc" }.each do |name, message|
    define_method("test_solves_#{name}") do
      in_tmpdir do |dir|
        result = solve(dir, name, runs(3_000_000))
        assert_exit 77, result
        assert_match(/RuntimeError: #{message}/, result.stderr)
      end
    end
  end

  # Comparisons count only in instrumented code: the same check made in a
  # file excluded from coverage gives libFuzzer nothing to solve it with.
  def test_comparisons_in_code_that_is_not_instrumented_are_not_reported
    in_tmpdir do |dir|
      File.write(File.join(dir, "secret.rb"), <<~RUBY)
        module Secret
          def self.match?(data) = data == "SECRETKEY12345"
        end
      RUBY
      write_harness(dir, <<~RUBY)
        require_relative "secret"
        Ruzzy.fuzz(->(data) { raise "magic string" if Secret.match?(data) })
      RUBY
      solved = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(3_000_000)}", chdir: dir)
      assert_exit 77, solved
      assert_match(/RuntimeError: magic string/, solved.stderr)
      assert_exit 0, ruzzy("--exclude=secret.rb", "harness.rb", "-seed=1", "-runs=#{runs(300_000)}", chdir: dir)
    end
  end

  # Without the regexp, float and conversion groups (nor the dictionary),
  # the same targets stay unsolved.
  def test_patterns_and_numbers_are_out_of_reach_without_their_hooks
    in_tmpdir do |dir|
      env = { "RUZZY_COMPARE_HOOKS" => "integer,string,symbol,hash" }
      %w[regex_token float_constant integer_text record_checksum].each do |name|
        assert_exit 0, solve(dir, name, runs(200_000), "--no-literal-dict", env:)
      end
    end
  end

  # A member of an Array of computed Integers (found through the array
  # group, and through Integer#== called from Array#include?) stays out of
  # reach without the hooks.
  def test_array_member_is_out_of_reach_without_the_hooks
    in_tmpdir { |dir| assert_exit 0, solve(dir, "array_member", 200_000, "--no-compare-hooks") }
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# Typed targets whose bugs need values that only comparison feedback
# finds inside the generated arguments (bench/solve/typed_*.rb).
class TestTypedFuzzSearch < Minitest::Test
  # A 16-bit port equal to a constant, a path under /etc/ and a true flag
  # (about 40,000 inputs with seed 1).
  def test_port_path_and_flag_are_found
    in_tmpdir do |dir|
      result = solve(dir, "typed_request", runs(2_000_000))
      assert_exit 77, result
      assert_match(%r{RuntimeError: reached /etc/ on port 8080}, result.stderr)
    end
  end

  # A magic first element and a magic member of a list of 32-bit
  # integers (about 50,000 inputs with seed 1, with value profile, which
  # typed targets default to).
  def test_list_with_a_magic_first_element_and_member_is_found
    in_tmpdir do |dir|
      result = solve(dir, "typed_list", runs(2_000_000))
      assert_exit 77, result
      assert_match(/RuntimeError: magic list/, result.stderr)
      assert_match(/ruzzy fuzz v1\n\[2125315823, 31337\]\n/, result.stderr)
    end
  end

  # A key the code looks up, chosen from 20,000 names: the choice is set
  # to the missing key (found after 100 inputs with seed 1; none in
  # 300,000 when pools are not described to the mutator).
  def test_a_key_the_code_looks_up_is_chosen_from_a_pool
    in_tmpdir do |dir|
      result = solve(dir, "typed_pool_key", runs(100_000))
      assert_exit 77, result
      assert_match(/RuntimeError: retries set to [6-9]/, result.stderr)
    end
  end
end

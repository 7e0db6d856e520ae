# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestInterpreterLayout: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestInterpreterLayoutSearch < Minitest::Test
  def test_fallback_solves_a_maze_of_lines_but_not_a_maze_on_one_line
    env = { "RUZZY_LOCATIONS" => "public" }
    in_tmpdir do |dir|
      maze = ruzzy(File.join(EXAMPLES, "maze.rb"), "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir, env:)
      assert_exit 77, maze
      assert_match(/RuntimeError: maze solved/, maze.stderr)

      # Precise locations solve it in about 23,000 runs with seed 1.
      ternary = ruzzy(File.join(EXAMPLES, "ternary_maze.rb"), "-seed=1", "-runs=300000", chdir: dir, env:)
      assert_exit 0, ternary
      refute_match(/ternary maze solved/, ternary.stderr)
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestCoverage: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestCoverageSearch < Minitest::Test
  def test_nested_if_maze_is_solved
    in_tmpdir do |dir|
      result = ruzzy(File.join(EXAMPLES, "maze.rb"), "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: maze solved/, result.stderr)
      assert_equal "MAZE!", File.binread(File.join(dir, artifacts(dir).first))[0, 5]
    end
  end

  def test_one_line_ternary_maze_is_solved_even_with_gc_compact
    in_tmpdir do |dir|
      harness = File.read(File.join(EXAMPLES, "ternary_maze.rb"))
                    .sub("Ruzzy.fuzz(->(data) { TernaryMaze.walk(data) })", <<~RUBY)
                      n = 0
                      Ruzzy.fuzz(lambda do |data|
                        n += 1
                        GC.compact if (n % 5000).zero?
                        TernaryMaze.walk(data)
                      end)
                    RUBY
      File.write(File.join(dir, "harness.rb"), harness)
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: ternary maze solved/, result.stderr)
      assert_equal "TERN", File.binread(File.join(dir, artifacts(dir).first))[0, 4]
    end
  end

  def test_trace_runs_the_two_script_pattern
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "fuzz"))
      FileUtils.cp(File.join(EXAMPLES, "maze.rb"), File.join(dir, "fuzz", "harness.rb"))
      File.write(File.join(dir, "fuzz", "tracer.rb"), "require \"ruzzy\"\nRuzzy.trace(\"harness.rb\")\n")
      result = ruby("fuzz/tracer.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: maze solved/, result.stderr)
    end
  end
end

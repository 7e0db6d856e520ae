# frozen_string_literal: true

require_relative "test_helper"

# `ruzzy oss-fuzz-build`: an executable fuzz target in $OUT that takes the
# platform's libFuzzer flags and still works when $OUT is moved elsewhere.
class TestOssFuzz < Minitest::Test
  def test_built_target_runs_with_libfuzzer_flags_after_being_moved
    search_test!
    in_tmpdir do |dir|
      out = File.join(dir, "out")
      build = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), "--out=#{out}", "--copy-gems", chdir: dir)
      assert_exit 0, build
      assert_match(%r{wrote .*/out/hello$}, build.stdout)
      assert File.executable?(File.join(out, "hello"))
      runner = File.join(dir, "runner")
      FileUtils.mv(out, runner)
      work = File.join(dir, "work")
      FileUtils.mkdir_p(work)
      result = run_command(File.join(runner, "hello"), "-seed=1", "-runs=#{runs(2_000_000)}", "-rss_limit_mb=2560",
                           chdir: work)
      assert_exit 77, result
      assert_match(/RuntimeError: Hello\.parse: the FUZ record is not implemented/, result.stderr)
      assert_equal 1, artifacts(work).size
    end
  end

  def test_bad_invocations
    assert_exit 2, ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"))
    result = ruzzy("oss-fuzz-build", "nope.rb", "--out=/tmp/x")
    assert_exit 2, result
    assert_match(/no such harness file: nope\.rb/, result.stderr)
  end
end

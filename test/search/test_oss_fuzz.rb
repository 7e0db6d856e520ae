# frozen_string_literal: true

# oss-fuzz-build copies the installed gem it runs from into $OUT: these
# tests run an installed gem (test/support/installed_ruzzy.rb).
require_relative "../support/installed_ruzzy"
require_relative "../test_helper"
require_relative "../support/oss_fuzz_runner"

# The search-budget tests of TestOssFuzz: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestOssFuzzSearch < Minitest::Test
  include OssFuzzRunner

  def test_run_fuzzer_finds_the_planted_bug_and_a_harmless_testcase_reproduces_cleanly
    prerequisites!
    in_tmpdir do |dir|
      out, corpus = out_and_corpus(dir)
      target = File.join(out, "fuzz_planted")
      found = run_command(target, "--", *RUN_FUZZER_FLAGS, "-seed=1", "-max_total_time=120", corpus,
                          chdir: out, env: RUNNER_ENV)
      assert_exit 77, found
      assert_match(/ArgumentError: planted bug/, found.stderr)
      assert_equal 1, artifacts(out).size
      assert_empty artifacts(out, "leak-")

      harmless = File.join(dir, "testcase")
      File.write(harmless, "harmless")
      replay = run_command(target, "--", *RUN_FUZZER_FLAGS, "-runs=100", harmless, chdir: out, env: RUNNER_ENV)
      assert_exit 0, replay
      crash = run_command(target, "--", *RUN_FUZZER_FLAGS, "-runs=100", File.join(out, artifacts(out).first),
                          chdir: out, env: RUNNER_ENV)
      assert_exit 77, crash
      assert_equal %w[parse <top>], crash_state(crash.stderr), crash.stderr
    end
  end

  def test_clusterfuzzlite_flags_with_jobs_find_the_planted_bug
    prerequisites!
    in_tmpdir do |dir|
      out, corpus = out_and_corpus(dir)
      artifacts_dir = File.join(dir, "artifacts")
      FileUtils.mkdir_p(artifacts_dir)
      run = run_command(File.join(out, "fuzz_planted"), "--", *RUN_FUZZER_FLAGS, *CLUSTERFUZZLITE_FLAGS,
                        "-artifact_prefix=#{artifacts_dir}/", "-max_total_time=120", "-jobs=2", "-workers=2",
                        corpus, chdir: dir, env: RUNNER_ENV)
      assert_equal 1, artifacts(artifacts_dir).size, run.output[-3000..]
      assert_empty artifacts(artifacts_dir, "leak-")
      logs = Dir.glob(File.join(dir, "fuzz-*.log")).map { |log| File.read(log) }.join
      assert_match(/ArgumentError: planted bug/, logs)
    end
  end

  def test_the_earlier_command_line_still_works_after_being_moved
    in_tmpdir do |dir|
      out = File.join(dir, "out")
      build = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), "--out=#{out}", "--copy-gems", chdir: dir)
      assert_exit 0, build
      assert_match(%r{wrote .*/out/hello$}, build.stdout)
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
end

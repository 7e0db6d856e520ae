# frozen_string_literal: true

require_relative "../test_helper"

# libFuzzer's workflow through ruzzy: processes that re-execute the harness
# (-fork, -jobs, -merge, -minimize_crash), expected exceptions, crash
# identity and the commands printed after a finding.
class TestWorkflow < Minitest::Test
  def test_fork_mode_runs_children_and_reports_the_finding
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      result = ruzzy("harness.rb", "-fork=2", "-seed=1", "-max_total_time=60", chdir: dir)
      assert_exit 77, result
      assert_match(/INFO: -fork=2: fuzzing in separate process/, result.stderr)
      assert_match(/KeyError: bad key/, result.stderr)
      assert_equal 1, artifacts(dir).size
    end
  end

  def test_jobs_run_the_same_harness_in_parallel
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      result = ruzzy("harness.rb", "-jobs=2", "-workers=2", "-seed=1", "-max_total_time=60", chdir: dir)
      assert_exit 1, result
      logs = %w[fuzz-0.log fuzz-1.log].map { |log| File.read(File.join(dir, log)) }
      logs.each { |log| assert_match(/KeyError: bad key/, log) }
      assert_match(/Job \d exited with exit code 77/, result.stderr)
    end
  end

  def test_merge_shrinks_a_corpus_without_losing_features
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      big = File.join(dir, "big")
      FileUtils.mkdir_p([big, File.join(dir, "small")])
      40.times { |i| File.binwrite(File.join(big, "in#{i}"), "#{(i % 4).chr}filler #{i}") }
      File.binwrite(File.join(big, "deep"), "\x03\x07")
      result = ruzzy("harness.rb", "-merge=1", "small", "big", chdir: dir)
      assert_exit 0, result
      small = Dir.children(File.join(dir, "small")).size
      assert_operator small, :<, 41
      assert_operator small, :>=, 4
      again = ruzzy("harness.rb", "-merge=1", "small", "big", chdir: dir)
      assert_match(/MERGE-OUTER: 0 new files with 0 new features added/, again.stderr)
    end
  end

  def test_minimize_crash_keeps_the_same_bug
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      File.binwrite(File.join(dir, "crash-big"), "KEY with a long tail")
      result = ruzzy("harness.rb", "-minimize_crash=1", "-runs=2000", "crash-big", chdir: dir)
      assert_exit 0, result
      refute_match(/mismatch in dedup tokens/, result.stderr)
      minimized = Dir.glob(File.join(dir, "minimized-from-*")).min_by { |path| File.size(path) }
      refute_nil minimized, result.stderr
      assert_operator File.size(minimized), :<, "KEY with a long tail".bytesize
      replay = ruzzy("harness.rb", File.basename(minimized), chdir: dir)
      assert_match(/DEDUP_TOKEN: KeyError--harness\.rb:<top>/, replay.stderr)
    end
  end

  def test_a_finding_prints_its_identity_and_the_commands_to_reproduce_it
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      result = ruzzy("harness.rb", "-seed=1", "-artifact_prefix=found-", chdir: dir)
      assert_exit 77, result
      assert_match(/^DEDUP_TOKEN: KeyError--harness\.rb:<top>$/, result.stderr)
      reproduce = result.stderr[/==ruzzy== Reproduce: (.*)$/, 1]
      assert_match(/ruzzy harness\.rb found-crash-\h{40}\z/, reproduce)
      assert_match(/==ruzzy== Minimise: .* -minimize_crash=1 -runs=100000 found-crash-\h{40}$/, result.stderr)
      replay = run_command("sh", "-c", reproduce, chdir: dir)
      assert_exit 77, replay
      assert_match(/KeyError: bad key/, replay.stderr)
      FileUtils.mv(File.join(dir, reproduce[/found-crash-\h{40}\z/]), File.join(dir, "saved input"))
      again = ruzzy("harness.rb", "saved input", chdir: dir)
      assert_match(/==ruzzy== Reproduce: .*ruzzy harness\.rb saved\\ input$/, again.stderr,
                   "replaying a file names that file, not a crash file that was never written")
    end
  end

  def test_bad_ignore_entries_are_rejected_before_fuzzing
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_) {}, ignore: [42])")
      result = ruzzy("harness.rb", "-runs=1", chdir: dir)
      assert_exit 1, result
      assert_match(/ignore: expects exception classes \(or their names\), got 42/, result.stderr)
    end
  end

  def test_harness_arguments_before_a_double_dash_stay_with_the_harness
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        File.write("argv", ARGV.inspect)
        Ruzzy.fuzz(->(_) {})
      RUBY
      result = ruzzy("harness.rb", "--mode=fast", "--", "-runs=10", chdir: dir)
      assert_exit 0, result
      assert_match(/Done 10 runs/, result.stderr)
      refute_match(/mode=fast/, result.stderr)
      assert_equal '["--mode=fast", "--", "-runs=10"]', File.read(File.join(dir, "argv"))
    end
  end

  def test_exit_inside_the_target_is_a_finding
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { exit(3) if data.bytesize > 2 })")
      result = ruzzy("harness.rb", "-seed=1", chdir: dir)
      assert_exit 77, result
      assert_match(/^SystemExit: exit$/, result.stderr)
      assert_equal 1, artifacts(dir).size
    end
  end

  def test_no_memory_error_is_a_finding
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { raise NoMemoryError, 'simulated' if data.bytesize > 2 })")
      result = ruzzy("harness.rb", "-seed=1", chdir: dir)
      assert_exit 77, result
      assert_match(/^NoMemoryError: simulated$/, result.stderr)
    end
  end

  def test_exceptions_in_threads_the_target_starts_are_not_findings
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Thread.report_on_exception = false
        Ruzzy.fuzz(lambda do |data|
          Thread.new { raise "in a thread" } if data.bytesize == 3
          nil
        end)
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 0, result
      assert_empty artifacts(dir)
    end
  end

  def test_at_exit_blocks_of_the_harness_do_not_run
    in_tmpdir do |dir|
      write_harness(dir, "at_exit { File.write('ran', 'yes') }\nRuzzy.fuzz(->(_) {})")
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir)
      refute File.exist?(File.join(dir, "ran")), "libFuzzer ends the process with exit(); Ruby's at_exit does not run"
    end
  end
end

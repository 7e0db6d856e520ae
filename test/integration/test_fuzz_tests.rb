# frozen_string_literal: true

require_relative "../test_helper"

# Fuzz tests inside test suites: Minitest and RSpec replay the corpus as
# ordinary examples, `ruzzy run-test` fuzzes one of them, and a crash found
# that way fails the next ordinary run; `ruzzy ci` runs them all.
class TestFuzzTests < Minitest::Test
  PROJECT = File.join(FIXTURES, "ci_project")
  NAME = "verifies any record"

  def in_project
    in_tmpdir do |dir|
      FileUtils.cp_r("#{PROJECT}/.", dir)
      yield dir
    end
  end

  # Puts a version-9 record with a wrong checksum byte into the corpus of
  # both checksum fuzz tests of the project in +dir+. From the fixture's
  # corpus alone, how often a campaign meets the bug is luck: between none
  # and dozens of findings in 2 x 2.5 million inputs, even with a seed (its
  # workers never run alike twice; a single run of 10.8 million inputs met
  # none on Ruby 3.3). From this one, dozens in 200,000. Every test that
  # needs the bug found plants it; the ordinary runs pass with it (a wrong
  # checksum is an ignored Checksum::Error).
  def plant_near_miss(dir)
    %w[test spec].each do |tests|
      File.write(File.join(dir, tests, "fuzz", "verifies_any_record", "version-9-wrong-checksum"), "V9c?")
    end
  end

  def test_minitest_crash_found_by_fuzzing_fails_the_next_ordinary_run
    in_project do |dir|
      plant_near_miss(dir)
      before = ruby("-Ilib", "test/checksum_fuzz_test.rb", chdir: dir)
      assert_exit 0, before
      assert_match(/3 runs, .* 0 failures, 0 errors/, before.stdout)

      fuzzing = ruzzy("-Ilib", "run-test", "test/checksum_fuzz_test.rb", NAME, "-seed=1",
                      "-max_total_time=120", chdir: dir)
      assert_exit 77, fuzzing
      crash = Dir.glob(File.join(dir, "test/fuzz/verifies_any_record/crash-*")).first
      refute_nil crash, fuzzing.stderr

      after = ruby("-Ilib", "test/checksum_fuzz_test.rb", chdir: dir)
      assert_exit 1, after
      assert_match(/fuzz input .*#{File.basename(crash)}: RuntimeError: unsupported version/, after.stdout)
      assert_match(/test_fuzz_verifies_any_record__crash_\h{40}/, after.stdout)
    end
  end

  def test_rspec_crash_found_by_fuzzing_fails_the_next_ordinary_run
    in_project do |dir|
      plant_near_miss(dir)
      assert_exit 0, run_command("rspec", "-Ilib", "spec", chdir: dir)
      assert_exit 77, ruzzy("-Ilib", "run-test", "spec/checksum_spec.rb", NAME, "-seed=1",
                            "-max_total_time=120", chdir: dir)
      after = run_command("rspec", "-Ilib", "spec", chdir: dir)
      assert_exit 1, after
      assert_match(/verifies any record with crash-\h{40}/, after.stdout)
      assert_match(/fuzz input .*crash-\h{40}: RuntimeError: unsupported version/, after.stdout)
    end
  end

  def test_expected_exceptions_pass_in_replay
    in_project do |dir|
      result = ruby("-Ilib", "test/checksum_fuzz_test.rb", "-v", chdir: dir)
      assert_exit 0, result
      assert_match(/test_fuzz_verifies_any_record__short = .* = \./, result.stdout)
    end
  end

  # The corpus directory's files, hidden ones included, with their contents.
  def corpus_state(corpus)
    Dir.children(corpus).sort.to_h { |name| [name, File.binread(File.join(corpus, name))] }
  end

  # A typed fuzz test whose hand-written regression file fails.
  TYPED_TEST = <<~'RUBY'
    require "minitest/autorun"
    require "ruzzy/minitest"

    class PortFuzzTest < Minitest::Test
      fuzz_test "accepts any port", Ruzzy::Gen.integer(0..65_535), Ruzzy::Gen.string(max_length: 8) do |port, host|
        raise ArgumentError, "port #{port} on #{host.inspect}" if port > 60_000 && host.start_with?("h")
      end
    end
  RUBY

  # `ruzzy run-test FILE NAME INPUT` runs the input and nothing else: a
  # failing regression file of a typed test is shrunk and printed, not
  # saved as another file beside it, and no artifact goes into the corpus.
  def test_replaying_a_typed_regression_file_writes_nothing_into_the_corpus
    in_tmpdir do |dir|
      corpus = File.join(dir, "test", "fuzz", "accepts_any_port")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(dir, "test", "port_test.rb"), TYPED_TEST)
      reported = File.join(corpus, "reported-by-a-user")
      File.write(reported, "ruzzy fuzz v1\n# from issue 12\n65000\n\"hostname\"\n")
      before = corpus_state(corpus)
      result = ruzzy("run-test", "test/port_test.rb", "accepts any port", reported, chdir: dir)
      assert_exit 77, result
      assert_equal before, corpus_state(corpus), "the replay added to the corpus:\n#{result.stderr}"
      assert_match(/ArgumentError: port 65000 on "hostname"/, result.stderr)
      assert_match(/shrunk in \d+ calls?:\nruzzy fuzz v1\n60001\n"h"\n/, result.stderr)
    end
  end

  # The same for a test of bytes, and for minimising the input: libFuzzer
  # writes its smaller inputs where -artifact_prefix says, which a run of
  # input files is not given as the corpus directory (whether a smaller
  # input is found in 2,000 runs is luck: where it would go is not).
  def test_replaying_or_minimising_a_saved_input_writes_nothing_into_the_corpus
    in_project do |dir|
      corpus = File.join(dir, "test", "fuzz", "verifies_any_record")
      File.write(File.join(corpus, "regression-v9"), "V9abR") # "V9ab" and its checksum byte
      before = corpus_state(corpus)
      input = "test/fuzz/verifies_any_record/regression-v9"
      replayed = ruzzy("-Ilib", "run-test", "test/checksum_fuzz_test.rb", NAME, input, chdir: dir)
      assert_exit 77, replayed
      assert_match(/RuntimeError: unsupported version/, replayed.stderr)
      minimised = ruzzy("-Ilib", "run-test", "test/checksum_fuzz_test.rb", NAME, "-minimize_crash=1", "-runs=2000",
                        "-seed=1", input, chdir: dir)
      assert_equal before, corpus_state(corpus), "a run of an input file added to the corpus:\n#{minimised.stderr}"
      assert_match(%r{^CRASH_MIN: executing: .* -exact_artifact_path=\./minimized-from-\h{40} }, minimised.stderr,
                   "smaller inputs go to the working directory")
    end
  end

  def test_run_test_names_a_missing_fuzz_test
    in_project do |dir|
      result = ruzzy("-Ilib", "run-test", "test/checksum_fuzz_test.rb", "nope", chdir: dir)
      assert_exit 2, result
      assert_match(%r{no fuzz test named "nope" in test/checksum_fuzz_test\.rb}, result.stderr)
    end
  end

  def test_ci_summary_without_a_finding
    in_project do |dir|
      result = ruzzy("ci", "--seconds=2", "test/clean_fuzz_test.rb", chdir: dir)
      assert_exit 0, result
      assert_match(/ruzzy ci: 1 fuzz test\(s\), 2 s each/, result.stdout)
      assert_match(%r{^  ok     counts bytes \(test/clean_fuzz_test\.rb\)}, result.stdout)
      assert_match(/ruzzy ci: 0 of 1 fuzz test\(s\) found a bug/, result.stdout)
    end
  end

  def test_ci_summary_with_findings
    in_project do |dir|
      plant_near_miss(dir)
      # Bounded by runs (seeded), not by time: the same budget on any machine.
      result = ruzzy("ci", "--seconds=600", "--stop-at-first", "--", "-seed=1", "-runs=#{runs(4_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/ruzzy ci: 3 fuzz test\(s\), 600 s each/, result.stdout)
      assert_match(%r{FOUND  verifies any record \(test/checksum_fuzz_test\.rb\): RuntimeError: unsupported version},
                   result.stdout)
      assert_match(%r{input: test/fuzz/verifies_any_record/crash-\h{40}}, result.stdout)
      assert_match(%r{FOUND  verifies any record \(spec/checksum_spec\.rb\)}, result.stdout)
      assert_match(/ok     counts bytes/, result.stdout)
      assert_match(/ruzzy ci: 2 of 3 fuzz test\(s\) found a bug; logs in ruzzy-ci-logs/, result.stdout)
      # Two tests named alike, in two files: a log each, named by file too.
      logs = File.join(dir, "ruzzy-ci-logs")
      %w[test_checksum_fuzz_test_rb spec_checksum_spec_rb].each do |file|
        log = File.join(logs, "#{file}_verifies_any_record.log")
        assert File.file?(log), "#{log}: each of the two tests named alike has its own log"
      end
      refute File.exist?(File.join(logs, "verifies_any_record.log"))
      assert File.file?(File.join(logs, "counts_bytes.log")), "a test with a name of its own keeps its log's name"
    end
  end

  # By default each fuzz test runs as a campaign: the run goes on after the
  # finding, which is filed as a group and kept as a regression example.
  # (The corpus holds a near miss, see plant_near_miss: a run meets the bug
  # dozens of times.)
  def test_ci_keeps_going_and_keeps_each_group_as_an_example
    in_project do |dir|
      plant_near_miss(dir)
      result = ruzzy("ci", "--seconds=600", "--workers=2", "test/checksum_fuzz_test.rb", "--", "-seed=1",
                     "-runs=#{runs(200_000)}", chdir: dir)
      assert_exit 77, result
      found = result.stdout[%r{FOUND  verifies any record \(test/checksum_fuzz_test\.rb\): 1 bug\(s\), (\d+) }, 1]
      assert_operator found.to_i, :>, 1, "the campaign went on after the first finding:\n#{result.stdout}"
      assert_match(/^         exception-\h{10}: RuntimeError: unsupported version$/, result.stdout)
      log = File.read(File.join(dir, "ruzzy-ci-logs", "verifies_any_record.log"))
      assert_match(/corpus in the fuzz test's directory, log in/, log)
      examples = Dir.glob(File.join(dir, "test", "fuzz", "verifies_any_record", "crash-*"))
      assert_equal 1, examples.size, result.stdout
      replay = run_command(RbConfig.ruby, "-Ilib", "test/checksum_fuzz_test.rb", chdir: dir)
      refute replay.status.success?, "the ordinary test run fails on the kept example"
      assert_match(/unsupported version/, replay.output)
      listing = ruzzy("findings", "ruzzy-ci-logs/findings/test_checksum_fuzz_test_rb_verifies_any_record", chdir: dir)
      assert_match(/RuntimeError: unsupported version/, listing.stdout)
      replayed = ruzzy("findings", "ruzzy-ci-logs/findings/test_checksum_fuzz_test_rb_verifies_any_record", "replay",
                       chdir: dir)
      assert_match(/^FAILS .* reproduced$/, replayed.stdout)
    end
  end
end

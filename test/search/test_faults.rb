# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestFaults: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestFaultsSearch < Minitest::Test
  HANG_ON_H = "Ruzzy.fuzz(->(data) { sleep(1000) if data.start_with?('H'); nil })"

  # Only -max_total_time: the default -timeout (25 s) still catches the hang,
  # and the run ends within the time plus the timeout.
  def test_default_timeout_reports_a_hang
    in_tmpdir do |dir|
      write_harness(dir, HANG_ON_H)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = ruzzy("harness.rb", "-seed=1", "-max_total_time=60", chdir: dir)
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      assert_exit 70, result
      assert_match(/INFO: ruzzy: an input running longer than 25 s is a timeout/, result.stderr)
      assert_match(/the fuzz target ran past -timeout; Ruby backtrace/, result.stderr)
      assert_equal 1, artifacts(dir, "timeout-").size
      assert_operator elapsed, :<, 60 + 25 + 30
    end
  end

  # The same in -fork children: the child reports the timeout and writes the
  # artifact; the parent goes on (libFuzzer ignores timeouts in fork mode)
  # and ends at its -max_total_time.
  def test_default_timeout_reaches_fork_children
    in_tmpdir do |dir|
      write_harness(dir, HANG_ON_H)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = ruzzy("harness.rb", "-seed=1", "-fork=1", "-max_total_time=30", chdir: dir)
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      assert_equal 1, artifacts(dir, "timeout-").size, result.stderr[-3000..]
      assert_equal "H", File.binread(File.join(dir, artifacts(dir, "timeout-").first))[0]
      assert_operator elapsed, :<, 30 + 25 + 30
    end
  end

  # An input far slower than the median is reported and kept, and fuzzing
  # goes on; a one-time cost (the first input to reach code that loads
  # something) is not a slow input.
  def test_slow_input_is_reported_and_kept_without_being_a_crash
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        slow_runs = 4
        loaded = false
        calls = 0
        Ruzzy.fuzz(lambda do |data|
          # (Slow only once ruzzy knows the median: after 1000 inputs.)
          next nil if (calls += 1) < 2000

          if slow_runs.positive? && data.start_with?("SLOW")
            slow_runs -= 1
            sleep 0.5
          end
          if !loaded && data.start_with?("LOAD")
            loaded = true
            sleep 0.5
          end
          nil
        end)
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(200_000)}", chdir: dir)
      assert_exit 0, result
      assert_match(/ruzzy: slow input: \d+\.\d ms, the faster of two runs, \d+x the median input \([\d.]+ [mu]s\); /,
                   result.stderr)
      assert_match(/written to .*slow-unit-\h{40}$/, result.stderr)
      assert_match(%r{^==ruzzy== Reproduce: .*ruzzy harness\.rb \./slow-unit-\h{40}$}, result.stderr)
      slow = artifacts(dir, "slow-unit-")
      assert_equal 1, slow.size
      assert_equal "SLOW", File.binread(File.join(dir, slow.first))[0, 4]
      assert_empty artifacts(dir)
    end
  end
end

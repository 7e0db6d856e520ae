# frozen_string_literal: true

require_relative "../test_helper"
require "etc"

# A campaign's workers (docs/campaigns.md, "Workers"): N processes fuzzing
# at once on one corpus, their findings in one store, their executions
# counted together, a worker that dies replaced without stopping the
# others.
class TestWorkers < Minitest::Test
  # Only the worker with -seed=1 can find SECRET (its start_with? guides
  # the fuzzer there); the other compares a digest, which tells the
  # fuzzer nothing, so it can meet SECRET only in an input the first one
  # put into the shared corpus.
  SHARED = <<~RUBY
    require "digest"
    FINDER = ARGV.include?("-seed=1")
    SECRET = "Qz7kP2wX"
    DIGEST = Digest::SHA256.digest(SECRET)
    Ruzzy.fuzz(lambda do |data|
      if FINDER
        if data.start_with?(SECRET)
          data.bytesize
        end
      elsif Digest::SHA256.digest(data.byteslice(0, 8)) == DIGEST
        raise IndexError, "an input of the other worker"
      end
      nil
    end)
  RUBY

  # A few branches and no bug.
  CLEAN = <<~RUBY
    Ruzzy.fuzz(lambda do |data|
      case data.getbyte(0)
      when 1 then :one
      when 2 then data.getbyte(1) == 7 ? :deep : :shallow
      end
      nil
    end)
  RUBY

  def test_each_workers_new_inputs_reach_the_others_while_they_run
    in_tmpdir do |dir|
      write_harness(dir, SHARED)
      # No literal dictionary: SECRET must not reach the second worker
      # from the harness's source.
      result = ruzzy("--keep-going", "--workers=2", "--no-literal-dict", "harness.rb", "-seed=1",
                     "-max_total_time=15", chdir: dir)
      assert_exit 77, result
      assert_match(/NEW  exception-\h{10} \(exception\): IndexError: an input of the other worker/, result.stderr)
      log = campaign_log(dir)
      assert_equal 2, log.scan(/^==> worker \d+: /).size, "two workers, neither replaced"
      assert_match(/ -seed=2 /, log)
    end
  end

  def test_the_summary_counts_every_workers_executions
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      result = ruzzy("--keep-going", "--workers=2", "harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 0, result
      ended = ended_workers(dir)
      assert_equal [0, 1], ended.map(&:first).sort
      assert(ended.all? { |_, status, _| status == "ended with status 0" }, ended.inspect)
      assert_equal [runs(20_000)] * 2, ended.map(&:last), "-runs counts per worker"
      assert_equal ended.sum(&:last), summary_executions(result)
      assert_match(/, 2 worker\(s\), 2 at a time$/, result.stderr)
    end
  end

  # kill -9 of a worker: a new one takes its place at once, the other goes
  # on, and the summary counts what each of the three ran.
  def test_a_killed_worker_is_replaced_and_the_others_go_on
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      campaign = start_campaign(dir, "--workers=2", "harness.rb", "-seed=1", "-max_total_time=12")
      pids = worker_pids(dir, 2)
      sleep 2
      Process.kill("KILL", pids.first)
      result = campaign.call
      assert_exit 0, result
      assert_match(/worker 0 \(pid #{pids.first}\) was killed by SIGKILL; a new worker takes its place/, result.stderr)
      ended = ended_workers(dir)
      assert_equal [0, 1, 2], ended.map(&:first).sort, campaign_log(dir)
      assert_equal "was killed by SIGKILL", ended.assoc(0)[1]
      assert_equal ["ended with status 0"] * 2, [ended.assoc(1)[1], ended.assoc(2)[1]], "the others ran to the end"
      assert_equal ended.sum(&:last), summary_executions(result)
      assert_match(/, 3 worker\(s\), 2 at a time$/, result.stderr)
    end
  end

  # SIGTERM (or Ctrl-C) to the supervisor stops every worker, and the
  # summary is still printed.
  def test_sigterm_stops_every_worker_and_the_summary_is_printed
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      campaign = start_campaign(dir, "--workers=2", "harness.rb", "-seed=1", "-max_total_time=120")
      pids = worker_pids(dir, 2)
      sleep 1
      Process.kill("TERM", campaign.pid)
      result = campaign.call
      assert_exit 72, result
      ended = ended_workers(dir)
      assert_equal [0, 1], ended.map(&:first).sort, campaign_log(dir)
      pids.each { |pid| assert_raises(Errno::ESRCH, "worker #{pid} ended") { Process.kill(0, pid) } }
      assert_equal ended.sum(&:last), summary_executions(result)
      assert_match(/^ruzzy: no findings$/, result.stderr)
    end
  end

  # libFuzzer's -fork=N (and -jobs, -workers) given to a campaign choose
  # its workers; they do not reach libFuzzer, which would fork each.
  def test_libfuzzers_fork_flag_in_a_campaign_is_the_number_of_workers
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      result = ruzzy("--keep-going", "harness.rb", "-fork=2", "-seed=1", "-runs=#{runs(5_000)}", chdir: dir)
      assert_exit 0, result
      log = campaign_log(dir)
      assert_equal 2, log.scan(/^==> worker \d+: /).size, log
      refute_match(/-fork=/, log.scan(/^==> worker .*$/).join("\n"))
      assert_equal ended_workers(dir).sum(&:last), summary_executions(result)
    end
  end

  def test_a_bad_number_of_workers_is_a_usage_error
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      [["--workers=0", "0"], ["--workers=abc", "abc"], ["--workers=-2", "-2"]].each do |option, given|
        result = ruzzy("--keep-going", option, "harness.rb", "-runs=1", chdir: dir)
        assert_exit 2, result
        assert_match(/ruzzy: --workers takes a whole number of workers, 1 or more, got "#{given}"/, result.stderr)
      end
      result = ruzzy("--keep-going", "harness.rb", "-jobs=many", "-runs=1", chdir: dir)
      assert_exit 2, result
      assert_match(/-jobs takes a whole number of workers/, result.stderr)
      plain = ruzzy("--workers=2", "harness.rb", "-runs=1", chdir: dir)
      assert_exit 2, plain
      assert_match(/ruzzy: --workers is for a campaign \(--keep-going\)/, plain.stderr)
      assert_match(/--workers=N +a campaign's processes fuzzing at once/, ruzzy("--help").stdout)
    end
  end

  # With no option choosing it, RUZZY_WORKERS is the number of workers of
  # a campaign and of `ruzzy ci`, else one per core; a bad value is a
  # usage error naming it.
  def test_the_default_number_of_workers
    in_tmpdir do |dir|
      write_harness(dir, CLEAN)
      { "3" => 3, nil => Etc.nprocessors }.each do |value, count|
        env = { "RUZZY_WORKERS" => value }
        result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-runs=50", chdir: dir, env:)
        assert_exit 0, result
        assert_match(/^ruzzy: campaign: .*, #{count} worker\(s\)$/, result.stderr)
        assert_equal count, campaign_log(dir).scan(/^==> worker \d+: /).size
        FileUtils.rm_rf(File.join(dir, "ruzzy-findings"))
      end
      [ruzzy("--keep-going", "harness.rb", "-runs=1", chdir: dir, env: { "RUZZY_WORKERS" => "0" }),
       ruzzy("ci", chdir: dir, env: { "RUZZY_WORKERS" => "two" })].each do |result|
        assert_exit 2, result
        assert_match(/ruzzy: RUZZY_WORKERS takes a whole number of workers, 1 or more, got "(0|two)"/, result.stderr)
      end
    end
  end

  # Two fuzz tests on two cores run at the same time: each one's first
  # input comes before the other's run ended (its log is written then).
  # Its lines stay whole, and the summary is as before.
  def test_ci_runs_fuzz_tests_at_once
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "test"))
      File.write(File.join(dir, "test", "pair_fuzz_test.rb"), <<~RUBY)
        require "minitest/autorun"
        require "ruzzy/minitest"

        class PairFuzzTest < Minitest::Test
          %w[first second].each do |name|
            fuzz_test name do |data|
              stamp = File.join(#{dir.inspect}, "started-\#{name}")
              File.write(stamp, Process.clock_gettime(Process::CLOCK_REALTIME).to_s) unless File.exist?(stamp)
              assert_equal data.bytesize, data.bytes.size
            end
          end
        end
      RUBY
      result = ruzzy("ci", "--workers=2", "--seconds=8", "--", "-seed=1", chdir: dir)
      assert_exit 0, result
      assert_match(/^ruzzy ci: 2 fuzz test\(s\), 8 s each, 2 at a time$/, result.stdout)
      started = %w[first second].to_h { |name| [name, Float(File.read(File.join(dir, "started-#{name}")))] }
      ended = %w[first second].to_h { |name| [name, File.mtime(File.join(dir, "ruzzy-ci-logs", "#{name}.log")).to_f] }
      assert_operator started["first"], :<, ended["second"], "the first began before the second ended"
      assert_operator started["second"], :<, ended["first"], "the second began before the first ended"
      assert_match(%r{^  ok     first \(test/pair_fuzz_test\.rb\): corpus 0 -> \d+ inputs$}, result.stdout)
      assert_match(%r{^  ok     second \(test/pair_fuzz_test\.rb\): corpus 0 -> \d+ inputs$}, result.stdout)
      assert_match(%r{^ruzzy ci: 0 of 2 fuzz test\(s\) found a bug; logs in ruzzy-ci-logs/$}, result.stdout)
    end
  end

  private

  # Starts a campaign in +dir+ in the background; returns a lambda that
  # waits for it and returns its Result (it answers #pid).
  def start_campaign(dir, *args)
    out = File.join(dir, "campaign.out")
    err = File.join(dir, "campaign.err")
    pid = Process.spawn("timeout", "-s", "KILL", HARD_TIMEOUT.to_s, "ruzzy", "--keep-going", *args,
                        chdir: dir, out:, err:)
    waiter = lambda do
      _, status = Process.wait2(pid)
      Result.new(File.read(out), File.read(err).scrub, status)
    end
    waiter.define_singleton_method(:pid) { pid }
    waiter
  end

  # The pids of the first +count+ workers, once they have started.
  def worker_pids(dir, count)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
    loop do
      log = File.exist?(File.join(dir, "ruzzy-findings", "campaign.log")) ? campaign_log(dir) : ""
      pids = log.scan(/^==> worker \d+: pid (\d+): /).flatten.map(&:to_i)
      return pids.first(count) if pids.size >= count

      flunk "#{count} workers did not start" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.1
    end
  end

  def campaign_log(dir)
    File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
  end

  # [worker number, how it ended, its executions] of each worker.
  def ended_workers(dir)
    campaign_log(dir).scan(/^<== worker (\d+): pid \d+ (.*) after (\d+) executions$/)
                     .map { |index, how, executions| [Integer(index), how, Integer(executions)] }
  end

  def summary_executions(result)
    Integer(result.stderr[/^ruzzy: campaign: (\d+) executions in \d+ s/, 1] || flunk(result.stderr))
  end
end

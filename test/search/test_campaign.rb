# frozen_string_literal: true

require_relative "../test_helper"

# A campaign on a target with three distinct bugs, one of each kind that
# matters: a Ruby exception (recorded in-process), a hang in Ruby code and
# a heap-buffer-overflow in an AddressSanitizer-built C extension (each
# ends a worker). One run with two workers at once must find all three,
# each filed once as one group, and count what every worker ran.
class TestCampaignSearch < Minitest::Test
  FAULTS = File.join(FIXTURES, "c_ext", "faults.c")

  def test_one_campaign_finds_an_exception_a_hang_and_a_memory_error
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      FileUtils.cp(File.join(FIXTURES, "campaign", "three_bugs.rb"), File.join(dir, "harness.rb"))
      result = ruzzy("--sanitizer=address", "--keep-going", "--workers=2", "harness.rb", "-seed=1", "-timeout=2",
                     "-max_total_time=120", chdir: dir)
      assert_exit 77, result
      assert_match(/in 3 group\(s\)/, result.stderr)
      announced = result.stderr.scan(/^  NEW  (\S+) /).flatten
      assert_equal 3, announced.size, "each group announced once: #{announced}"
      assert_equal announced.uniq, announced
      assert_every_worker_counted(dir, result)
      listing = ruzzy("findings", chdir: dir)
      assert_match(/^\s+asan-\h+ .*heap-buffer-overflow in faults_overflow \(faults\.c\)/, listing.stdout)
      assert_match(/^\s+exception-\h+ .*ArgumentError: bad header/, listing.stdout)
      assert_match(/^\s+timeout-\h+ .*timeout in <top> \(harness\.rb\)/, listing.stdout)
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_equal 2, replay.stdout.scan(/ reproduced$/).size, replay.stdout
      assert_match(/^FAILS +timeout-\h+ +hangs: ran \d+ s \(the hang threshold is 2 s\)$/, replay.stdout)
    end
  end

  private

  # The summary's executions are the sum of each worker's own count (the
  # log's line for its end); the overflow ended at least one worker.
  def assert_every_worker_counted(dir, result)
    log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
    counts = log.scan(/^<== worker \d+: pid \d+ .* after (\d+) executions$/).flatten.map(&:to_i)
    assert_equal log.scan(/^==> worker \d+: /).size, counts.size, "every worker's end is logged"
    assert_operator counts.size, :>=, 3, "the overflow ended a worker, and another took its place"
    assert_equal counts.sum, Integer(result.stderr[/^ruzzy: campaign: (\d+) executions/, 1])
    assert_match(/, #{counts.size} worker\(s\), 2 at a time$/, result.stderr)
  end
end

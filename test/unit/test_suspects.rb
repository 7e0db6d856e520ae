# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/suspects"

# Inputs stopped as hangs before the threshold wait in the findings
# directory as suspects (Findings::Suspects) until the supervisor runs them
# alone: a worker keeps few of them, and what a check confirmed is known to
# every worker.
class TestSuspects < Minitest::Test
  Suspects = Ruzzy::Findings::Suspects
  GROUP = "timeout-0123456789"
  OTHER = "timeout-abcdefabcd"

  def test_a_worker_keeps_only_suspects_smaller_than_those_it_kept
    Dir.mktmpdir do |dir|
      suspects = Suspects.new(dir)
      assert suspects.offer(GROUP, "HANG!", 0.1)
      refute suspects.offer(GROUP, "HANG?", 0.1), "as large as one kept"
      assert suspects.offer(GROUP, "HAN", 0.5)
      assert suspects.offer(OTHER, "loooong", 1.5), "another loop's"
      pending = suspects.pending
      assert_equal [3, 5, 7], pending.map(&:bytes), "smallest first"
      stopped = pending.map { |suspect| [suspect.group, suspect.seconds] }
      assert_equal [[GROUP, 0.5], [GROUP, 0.1], [OTHER, 1.5]], stopped
      assert_equal "HAN", pending.first.input
      assert_equal [GROUP, OTHER], suspects.groups.sort
      another_worker = Suspects.new(dir)
      assert another_worker.offer(GROUP, "HANG!", 0.1), "each worker keeps its own"
    end
  end

  def test_a_confirmed_suspect_names_the_group_its_lone_run_was_filed_in
    Dir.mktmpdir do |dir|
      suspects = Suspects.new(dir)
      suspects.offer(GROUP, "HANG", 0.1)
      suspect = suspects.pending.first
      suspects.confirm(GROUP, OTHER)
      suspects.delete(suspect)
      assert_empty suspects.pending
      assert_equal({ GROUP => OTHER, OTHER => OTHER }, suspects.confirmed)
      assert_equal [GROUP, OTHER], suspects.groups.sort, "workers stop inputs in either's loop"
      suspects.confirm(GROUP, OTHER)
      assert_equal 2, File.readlines(File.join(dir, Suspects::DIR, Suspects::CONFIRMED)).size, "written once"
    end
  end
end

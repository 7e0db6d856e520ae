# frozen_string_literal: true

require_relative "../test_helper"
require "tmpdir"
require "ruzzy/campaign/corpus_clock"

# The shared corpus directory's clock: libFuzzer's workers list it again
# only when its modification time, in whole seconds, moved past their last
# listing, so an input written in the second of another worker's listing
# must not leave the directory's time in that second.
class TestCorpusClock < Minitest::Test
  CorpusClock = Ruzzy::Campaign::CorpusClock

  def test_a_directory_changed_in_a_past_second_is_moved_to_the_present
    Dir.mktmpdir do |dir|
      listed = set_mtime(dir, Time.now - 60)
      clock = CorpusClock.new(dir)
      written = set_mtime(dir, listed + 0.5) # a worker's input, in the second of a listing
      clock.tick
      assert_operator File.mtime(dir).to_i, :>, written.to_i, "every worker lists it again"
    end
  end

  def test_an_unchanged_directory_is_left_alone
    Dir.mktmpdir do |dir|
      listed = set_mtime(dir, Time.now - 60)
      clock = CorpusClock.new(dir)
      clock.tick
      assert_equal listed, File.mtime(dir)
    end
  end

  # A change in the present second waits for a tick in a later one (the
  # workers may list it again within this second still).
  def test_a_change_in_the_present_second_waits
    Dir.mktmpdir do |dir|
      clock = CorpusClock.new(dir)
      ahead = set_mtime(dir, Time.now + 60)
      clock.tick
      assert_equal ahead, File.mtime(dir)
    end
  end

  def test_a_directory_that_went_away_is_no_error
    dir = Dir.mktmpdir
    clock = CorpusClock.new(dir)
    Dir.rmdir(dir)
    assert_nil clock.tick
  end

  def test_no_corpus_directory_is_no_error
    assert_nil CorpusClock.new(nil).tick
  end

  # A fuzz test's corpus directory is known once its first worker
  # announced it; the campaign's own directory is never replaced.
  def test_a_directory_announced_later_is_kept_moving
    Dir.mktmpdir do |dir|
      clock = CorpusClock.new(nil)
      clock.watch(nil)
      listed = set_mtime(dir, Time.now - 60)
      clock.watch(dir)
      written = set_mtime(dir, listed + 0.5)
      clock.tick
      assert_operator File.mtime(dir).to_i, :>, written.to_i, "the announced directory is watched"
      Dir.mktmpdir do |other|
        changed = set_mtime(other, Time.now - 30)
        clock.watch(other)
        clock.tick
        assert_equal changed, File.mtime(other), "the first directory stays the one watched"
      end
    end
  end

  private

  def set_mtime(dir, time)
    File.utime(time, time, dir)
    File.mtime(dir)
  end
end

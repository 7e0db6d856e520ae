# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/minimiser"

# `ruzzy findings minimise GROUP -max_total_time=S` keeps to its budget: a
# round of a hang runs its inputs for their whole -timeout, so one that
# would end past the budget is not started. The clock is the test's: each
# run of the fake harness takes the time a real one would.
class TestMinimiser < Minitest::Test
  Minimiser = Ruzzy::Findings::Minimiser

  # A harness whose every run hangs for +timeout+ seconds: the minimising
  # step finds nothing smaller (it exits 0), after a whole -timeout.
  class HangingHarness
    attr_reader :runs

    def initialize(clock, timeout)
      @clock = clock
      @timeout = timeout
      @runs = 0
    end

    def run(*_args)
      @runs += 1
      @clock[0] += @timeout
      ["stat::number_of_executed_units: 1\n", Struct.new(:success?).new(true)]
    end
  end

  # A Minimiser on the test's clock (+clock+[0], seconds).
  def minimiser(kind, harness, clock, seconds)
    group = Struct.new(:kind, :name, :input_path).new(kind, "#{kind}-0123456789", @input)
    found = Class.new(Minimiser) { define_method(:now) { clock[0] } }
    found.new(store: nil, group:, reproduction: harness, flags: ["-timeout=25"], hang_seconds: 25, runs: 20_000,
              seconds:, seed: 1)
  end

  def with_input
    Dir.mktmpdir do |dir|
      @input = File.join(dir, "input")
      File.binwrite(@input, "a" * 40)
      yield
    end
  end

  def test_a_round_of_a_hang_that_would_end_past_the_budget_is_not_started
    with_input do
      clock = [0]
      harness = HangingHarness.new(clock, 25)
      stop = minimiser("timeout", harness, clock, 60).run.stop
      assert_equal :round_too_long, stop.reason
      assert_operator clock[0], :<=, 60, "ended within the budget: #{harness.runs} rounds"
      assert_equal 1, harness.runs, "25 s left after the first round; a round of the hang takes up to 50"
      assert_match(/what is left of the budget of 60 seconds is shorter than a round of this hang \(up to 50 s/,
                   stop.to_s)
    end
  end

  def test_the_first_round_always_runs_and_other_groups_use_the_whole_budget
    with_input do
      clock = [0]
      harness = HangingHarness.new(clock, 25)
      minimiser("timeout", harness, clock, 10).run
      assert_equal 1, harness.runs, "a budget shorter than a round still gets one"
      clock = [0]
      harness = HangingHarness.new(clock, 25)
      stop = minimiser("exception", harness, clock, 60).run.stop
      assert_equal :seconds, stop.reason
      assert_equal 3, harness.runs, "an exception's rounds are bounded by -max_total_time alone"
    end
  end

  # "met another bug" says whose size it gives: the input met, or the new
  # group's (the same input), never a size the group on file does not have;
  # and when it was raised where the group being minimised was.
  def test_another_bug_met_says_whose_size_it_gives
    identity = Struct.new(:group, :title, :site, :token).new("exception-0123456789", "KeyError: k", "list.rb:170",
                                                             "KeyError--parse--run")
    group = Struct.new(:site, :token)
    other = lambda do |outcome, site = nil, token = "KeyError--list--run", bytes: 14|
      Minimiser::Other.new(identity:, bytes:, outcome:, group: group.new(site, token)).to_s
    end
    assert_equal "exception-0123456789 KeyError: k (a new group, 14 bytes)", other.call(:new)
    assert_equal "exception-0123456789 KeyError: k (on file already, with an input no larger; met with 14 bytes)",
                 other.call(:repeat, "list.rb:9")
    assert_equal "exception-0123456789 KeyError: k (on file already, with an input no larger; met with 1 byte)",
                 other.call(:repeat, bytes: 1)
    # One line raising for two callers is two groups, often one bug: said.
    assert_equal "exception-0123456789 KeyError: k (a new group, 14 bytes; raised at list.rb:170 too, " \
                 "by other callers: maybe the same bug)", other.call(:new, "list.rb:170")
    # Another exception on that line (Integer() raising TypeError or
    # ArgumentError) is not "other callers".
    assert_equal "exception-0123456789 KeyError: k (a new group, 14 bytes; another exception raised at list.rb:170: " \
                 "maybe the same bug)", other.call(:new, "list.rb:170", "TypeError--list--run")
  end
end

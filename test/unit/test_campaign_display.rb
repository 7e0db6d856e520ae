# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/campaign/display"
require "ruzzy/findings/store"

# The status line a person watching a campaign reads: when no input has
# finished for a while (a worker on a slow input, or a hang before its
# timeout), it says so rather than repeating the same count.
class TestCampaignDisplay < Minitest::Test
  # A Display on the test's clock (+clock+[0], seconds), printing to +out+.
  def display(out, clock)
    Class.new(Ruzzy::Campaign::Display) { define_method(:monotonic) { clock[0] } }.new(out)
  end

  def status(display, executions)
    display.status(executions:, exec_per_second: 100, coverage: 5, corpus: 3, groups: 1, findings: 2)
  end

  def test_the_status_line_says_when_no_input_has_finished_for_a_while
    out = StringIO.new
    clock = [0]
    shown = display(out, clock)
    [[4, 100], [10, 200], [20, 200], [25, 200], [31, 200], [41, 300]].each do |seconds, executions|
      clock[0] = seconds
      status(shown, executions)
    end
    lines = out.string.lines
    assert_equal 4, lines.size, out.string
    assert_match(/\A\[00:00:10\] 200 execs .* group\n\z/, lines[0])
    assert_match(/\A\[00:00:20\] 200 execs .* group  \(no input finished for 10 s: a slow input or a hang\)\n\z/,
                 lines[1])
    assert_match(/\A\[00:00:31\] 200 execs .*\(no input finished for 21 s: /, lines[2])
    refute_match(/no input finished/, lines[3], "inputs finish again")
  end

  # The summary says where the slow inputs a campaign kept are, and that
  # they are not hangs: only the log named them before.
  def test_the_summary_names_the_slow_inputs_kept
    out = StringIO.new
    display(out, [0]).summary([], [], "ruzzy-findings", slow: 2)
    assert_equal ["", "ruzzy: no findings",
                  "ruzzy: 2 slow input(s) in ruzzy-findings/slow-units/, not hangs (each finished within the hang " \
                  "threshold): campaign.log says how long each ran"], out.string.lines.map(&:chomp)
    out = StringIO.new
    display(out, [0]).summary([], [], "ruzzy-findings")
    refute_match(/slow/, out.string)
  end

  # A group whose input passed alone is marked in the table, and the mark
  # said once below it; one that failed alone as filed is not marked.
  def test_the_table_marks_a_group_whose_input_passed_alone
    group = Ruzzy::Findings::Store::Group
    groups = [group.new(name: "exception-1", title: "IOError: stale", findings: 3, bytes: 2, alone: "passes"),
              group.new(name: "exception-2", title: "KeyError: key", findings: 2, bytes: 1, alone: "fails"),
              group.new(name: "exception-3", title: "TypeError: t", findings: 1, bytes: 1, alone: "passes")]
    out = StringIO.new
    display(out, [0]).summary(groups, [], "ruzzy-findings")
    lines = out.string.lines.map(&:chomp)
    assert_equal 2, lines.grep(/ \w+Error: \w+ \[passes alone\]$/).size, out.string
    assert_equal 1, lines.grep(/KeyError: key$/).size, out.string
    cause = Ruzzy::Campaign::Display::PASSES_ALONE_CAUSE
    assert_equal ["  [passes alone]: its input passed when run by itself: #{cause}"], lines.grep(/^  \[/)
  end
end

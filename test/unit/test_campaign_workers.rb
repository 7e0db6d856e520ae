# frozen_string_literal: true

require_relative "../test_helper"
require "stringio"
require "tmpdir"
require "ruzzy/campaign/workers"

# What a campaign's workers counted together, as its status line and
# summary show it: a worker's numbers count once it ended too, even when it
# ended before the supervisor asked for them (a worker that a finding ends
# at once, over and over, on a busy machine).
class TestCampaignWorkers < Minitest::Test
  Workers = Ruzzy::Campaign::Workers

  def test_a_worker_that_ended_unseen_still_counts
    Dir.mktmpdir do |dir|
      workers = Workers.new(findings: dir, log: StringIO.new, artifacts: dir)
      [[3, 1, 5], [7, 2, 4]].each do |coverage, corpus, executions|
        lines = "#2\\tINITED cov: #{coverage} ft: 3 corp: #{corpus}/1b exec/s: 0 rss: 30Mb\\n" \
                "stat::number_of_executed_units: #{executions}\\n"
        workers.start { ["printf", lines] }
        workers.follow(1) { nil } until workers.empty?
      end
      counted, reached = workers.numbers
      assert_equal({ executions: 9, coverage: 7, corpus: 2 }, counted)
      assert_nil reached
      assert_equal 2, workers.started
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# examples/web/rails, fuzzed as its README says: a campaign from an empty
# corpus finds its five planted bugs, and the app with its bugs fixed
# (RUZZY_EXAMPLE_FIXED=1) gives no finding from an empty corpus. The
# app is a Rails app of Debian's packages (Rails 6.1 on Debian 12, 7.2 in
# the chroots): without Rails these tests fail, they are not skipped.
class TestWebRailsSearch < Minitest::Test
  APP = File.join(RuzzyTestHelper::EXAMPLES, "web", "rails")

  # Requests the fixed app is sent.
  FIXED_RUNS = 4_000

  def setup
    requires = %w[rails active_record/railtie action_controller/railtie sqlite3].map { |lib| "require '#{lib}'" }
    loaded = ruby("-e", requires.join("; "))
    assert loaded.status.success?,
           "examples/web/rails needs Rails with Active Record and sqlite3 (apt-get install ruby-railties " \
           "ruby-actionpack ruby-activerecord ruby-sqlite3; bin/setup installs them):\n#{loaded.stderr}"
  end

  # The planted bugs, as a campaign's NEW lines name them.
  PLANTED = {
    "tasks" => /NoMethodError: undefined method .\[\]. for nil/,
    "members" => /Ruzzy::Detectors::SQLInjection: /,
    "attachment" => /Ruzzy::Detectors::PathTraversal: /,
    "exports" => /Ruzzy::Detectors::CommandInjection: /,
    "board" => /Ruzzy::Detectors::Deserialization: /
  }.freeze
  # The campaign's budget.
  CAMPAIGN_SECONDS = 900

  # From an empty corpus, as the README's campaign runs it, one worker
  # finds the five planted bugs: the routes, the nested JSON keys
  # ({"export": {"name": ...}}), the query's and the cookie's names learnt
  # from the app, not given. It is stopped once it has.
  def test_a_campaign_from_an_empty_corpus_finds_the_five_planted_bugs
    in_tmpdir do |dir|
      found, output = campaign_until_found(dir, ["rack", APP], PLANTED, seconds: CAMPAIGN_SECONDS)
      assert_equal PLANTED.keys, found, output[-6000..] || output
      assert_match(/^INFO: ruzzy rack: coverage of the app's own files/, output)
    end
  end

  def test_the_fixed_app_has_nothing_to_find
    routes = %r{^INFO: ruzzy rack: 8 routes: .*POST /projects/:project_id/tasks.*; each request in a database }
    assert_fixed_example_silent(APP, FIXED_RUNS, routes)
  end
end

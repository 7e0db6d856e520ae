# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/web_examples"

# examples/web/rails, fuzzed as its README says: each planted bug's request
# is reported by the bug it plants, a campaign from an empty corpus finds
# the bugs behind names it learns from the app, and the app with its bugs
# fixed (RUZZY_EXAMPLE_FIXED=1) answers each request and gives no finding
# from an empty corpus. The app is a Rails app of Debian's packages (Rails
# 6.1 on Debian 12, 7.2 in the chroots): without Rails these tests fail,
# they are not skipped.
class TestWebRailsSearch < Minitest::Test
  include WebExamples

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

  # Each planted bug's request, sent once through Web::RackTarget: what
  # each detector, and Rails' error handling, must then report.
  REQUESTS = <<~'RUBY'
    app = Ruzzy::Web::AppLoader.load(ENV.fetch("APP"))
    target = Ruzzy::Web::RackTarget.new(app)
    def request(verb, path, query: {}, cookies: {}, json: nil)
      Ruzzy::Web::Request.new(verb:, path:, query:, headers: {}, cookies:, body: json && JSON.generate(json),
                              content_type: json && "application/json")
    end
    REQUESTS = {
      "tasks" => request("POST", "/projects/1/tasks", json: { "task" => { "title" => "no assignee" } }),
      "members" => request("GET", "/projects/1/members", query: { "name" => "' or ruzzy or '" }),
      "attachment" => request("GET", "/projects/1/attachment", query: { "file" => "../ruzzy" }),
      "exports" => request("POST", "/projects/1/exports", json: { "export" => { "name" => "x;ruzzy" } }),
      "board" => request("GET", "/projects/1/board", cookies: { "board" => "--- !ruby/object:RuzzyCanary {}" })
    }.freeze
    Ruzzy.fuzz(->(data) { target.call(REQUESTS.fetch(data)) if REQUESTS.key?(data); nil })
  RUBY

  # The planted bugs, as a report and a campaign's NEW lines name them.
  PLANTED = {
    "tasks" => /NoMethodError: undefined method .\[\]. for nil/,
    "members" => /Ruzzy::Detectors::SQLInjection: /,
    "attachment" => /Ruzzy::Detectors::PathTraversal: /,
    "exports" => /Ruzzy::Detectors::CommandInjection: /,
    "board" => /Ruzzy::Detectors::Deserialization: /
  }.freeze
  # What a campaign of one worker (the README's Step 4) finds from an
  # empty corpus within its budget on every Ruby, with a margin that holds on
  # a loaded machine: the SQL injection behind the query's `name` and the
  # unsafe deserialization behind the cookie `board`, both names learnt from
  # the app's code, not given (-seed=1: within 10 s and 52 s, 3,000 and
  # 20,000 requests, on Ruby 3.1, 3.3 and 3.4; CI's loaded machine answers
  # one worker 120 to 150 requests a second). All five take 20,000 to
  # 60,000 requests or more, the command injection most often last
  # (3.4, -seed=1: four in 58,000): too many for a budget that holds, so
  # all five are a search statistic (examples/web/rails/README.md), not a
  # test.
  FOUND_BY_CAMPAIGN = PLANTED.slice("members", "board")
  CAMPAIGN_SECONDS = 400

  def test_each_planted_bug_is_reported_given_its_request_and_the_fixed_app_answers_it
    assert_planted_requests_reported(APP, REQUESTS, PLANTED.transform_values { |report| /^#{report}/ })
  end

  # From an empty corpus, as the README's campaign runs it, one worker
  # finds the bugs behind the names it learnt from the app. It is stopped
  # once it has. Its reports show each request as a curl command against
  # the port Rails serves on.
  def test_a_campaign_from_an_empty_corpus_finds_the_bugs_behind_learnt_names
    in_tmpdir do |dir|
      assert_campaign_finds(dir, ["rack", APP], FOUND_BY_CAMPAIGN, seconds: CAMPAIGN_SECONDS)
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_match(/^INFO: ruzzy rack: coverage of the app's own files/, log)
      # A Rails app's requests are shown against `bin/rails server`'s port.
      reports = Dir[File.join(dir, "ruzzy-findings", "*", "report.txt")].map { |path| File.read(path) }
      assert(reports.any? { |report| report.include?("server (bin/rails server, port 3000):\n  curl -i -X GET ") },
             reports.join("\n---\n"))
    end
  end

  def test_the_fixed_app_has_nothing_to_find
    routes = %r{^INFO: ruzzy rack: 8 routes: .*POST /projects/:project_id/tasks.*; each request in a database }
    assert_fixed_example_silent(APP, FIXED_RUNS, routes)
  end
end

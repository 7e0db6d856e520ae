# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/web_examples"

# examples/web/rails, fuzzed as its README says: each planted bug's request
# is reported by the bug it plants, a campaign from an empty corpus finds
# all five, and the app with its bugs fixed (RUZZY_EXAMPLE_FIXED=1)
# answers each request and gives no finding from an empty corpus. The
# app is a Rails app of Debian's packages (Rails 6.1 on Debian 12, 7.2 in
# the chroots): without Rails these tests fail, they are not skipped.
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
  # A campaign finds them all from an empty corpus: with one worker in
  # 9,000 to 60,000 requests (Ruby 3.1 and 3.4, -seed=1 to 4), with two
  # (the README's command on two cores) in 33,000 to 83,000 requests
  # between them (3.4, -seed=1 to 3), the path traversal or the command
  # injection last. The command injection's body must be {"export":
  # {"name": ...}} with a shell canary in the name, the path traversal's
  # `file` walk out through "../ruzzy": the keys Rails looked up for the
  # app and the canary forms the detectors guided the sinks towards are
  # set into the requests (wanted values).
  FOUND_BY_CAMPAIGN = PLANTED
  # Workers of the campaign, and its budget: on a machine as loaded as
  # CI's (four test files at once on two cores) Rails answered 96 requests
  # a second to one worker; two get more of the machine, 135,000 requests
  # in the budget at 150 a second.
  CAMPAIGN_WORKERS = 2
  CAMPAIGN_SECONDS = 900

  def test_each_planted_bug_is_reported_given_its_request_and_the_fixed_app_answers_it
    assert_planted_requests_reported(APP, REQUESTS, PLANTED.transform_values { |report| /^#{report}/ })
  end

  # From an empty corpus, as the README's campaign runs it, two workers
  # find the planted bugs: the routes, the nested JSON keys
  # ({"export": {"name": ...}}), the query's and the cookie's names learnt
  # from the app, not given. It is stopped once it has.
  def test_a_campaign_from_an_empty_corpus_finds_the_planted_bugs
    in_tmpdir do |dir|
      assert_campaign_finds(dir, ["rack", APP], FOUND_BY_CAMPAIGN, seconds: CAMPAIGN_SECONDS,
                                                                   workers: CAMPAIGN_WORKERS)
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_match(/^INFO: ruzzy rack: coverage of the app's own files/, log)
    end
  end

  def test_the_fixed_app_has_nothing_to_find
    routes = %r{^INFO: ruzzy rack: 8 routes: .*POST /projects/:project_id/tasks.*; each request in a database }
    assert_fixed_example_silent(APP, FIXED_RUNS, routes)
  end
end

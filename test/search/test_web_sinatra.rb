# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/web_examples"

# examples/web/sinatra, fuzzed as its README says: each planted bug's
# request is reported by the bug it plants, a campaign from an empty corpus
# finds all five, and the same app with the bugs fixed
# (RUZZY_EXAMPLE_FIXED=1) answers each request and gives no finding from an
# empty corpus. The app needs Debian's ruby-sinatra and
# ruby-sqlite3: without them these tests fail, they are not skipped.
class TestWebSinatraSearch < Minitest::Test
  include WebExamples

  APP = File.join(RuzzyTestHelper::EXAMPLES, "web", "sinatra", "config.ru")

  # Requests the fixed app is sent.
  FIXED_RUNS = 20_000

  # Each planted bug's request, sent once through Web::RackTarget: what the
  # search must reach, and what each detector must then report.
  REQUESTS = <<~'RUBY'
    require "rack"
    app, = Rack::Builder.parse_file(ENV.fetch("APP"))
    target = Ruzzy::Web::RackTarget.new(app)
    def request(verb, path, query: {}, cookies: {}, json: nil)
      Ruzzy::Web::Request.new(verb:, path:, query:, headers: {}, cookies:, body: json && JSON.generate(json),
                              content_type: json && "application/json")
    end
    REQUESTS = {
      "notes" => request("POST", "/projects/1/notes", json: { "note" => { "body" => "no title" } }),
      "search" => request("POST", "/projects/1/search", json: { "query" => "' or ruzzy or '" }),
      "files" => request("GET", "/projects/1/files", query: { "name" => "../ruzzy" }),
      "export" => request("POST", "/projects/1/export", json: { "format" => "html;ruzzy" }),
      "preferences" => request("GET", "/preferences", cookies: { "prefs" => "--- !ruby/object:RuzzyCanary {}" })
    }.freeze
    Ruzzy.fuzz(->(data) { target.call(REQUESTS.fetch(data)) if REQUESTS.key?(data); nil })
  RUBY

  def setup
    loaded = ruby("-e", "require 'sinatra/base'; require 'sqlite3'")
    assert loaded.status.success?,
           "examples/web/sinatra needs Sinatra and sqlite3 (apt-get install ruby-sinatra ruby-sqlite3; " \
           "bin/setup installs them):\n#{loaded.stderr}"
  end

  # What each planted request is reported as.
  REPORTS = {
    "notes" => /^NoMethodError: undefined method .strip. for nil/,
    "search" => /^Ruzzy::Detectors::SQLInjection: SQL injection: SQLite3::Statement.new got the query "SELECT /,
    # Sinatra's send_file asks File.mtime first: a probe, not an open.
    "files" => %r{^Ruzzy::Detectors::PathTraversal: path traversal: File.mtime got ".*/files/\.\./ruzzy"},
    "export" => /^Ruzzy::Detectors::CommandInjection: command injection: Kernel#` would run the command "ruzzy"/,
    "preferences" => /^Ruzzy::Detectors::Deserialization: unsafe deserialization: .* instantiated RuzzyCanary/
  }.freeze

  def test_each_planted_bug_is_reported_given_its_request_and_the_fixed_app_answers_it
    assert_planted_requests_reported(APP, REQUESTS, REPORTS)
  end

  # The planted bugs, as a campaign's NEW lines name them.
  PLANTED = {
    "notes" => /NoMethodError: undefined method .\[\]. for nil/,
    "search" => /Ruzzy::Detectors::SQLInjection: /,
    "files" => /Ruzzy::Detectors::PathTraversal: /,
    "export" => /Ruzzy::Detectors::CommandInjection: /,
    "preferences" => /Ruzzy::Detectors::Deserialization: /
  }.freeze
  # The campaign's budget: seed 1 finds all five in about a minute on
  # Ruby 3.1 (every seed of 1 to 3 in under three).
  CAMPAIGN_SECONDS = 420

  # From an empty corpus, as the README's Step 4 runs it, a campaign finds
  # the five planted bugs: the routes, the JSON bodies' keys ("query",
  # "format") and the cookie's name ("prefs") learnt from the app, not
  # given. It is stopped once it has.
  def test_a_campaign_from_an_empty_corpus_finds_the_five_planted_bugs
    in_tmpdir do |dir|
      output = assert_campaign_finds(dir, ["rack", APP], PLANTED, seconds: CAMPAIGN_SECONDS)
      assert_match(%r{^ruzzy rack: 7 routes: GET /, }, output)
    end
  end

  def test_the_fixed_app_has_nothing_to_find
    assert_fixed_example_silent(APP, FIXED_RUNS,
                                %r{^INFO: ruzzy rack: 7 routes: GET /, GET /projects/:id, GET /projects/:id/files, })
  end
end

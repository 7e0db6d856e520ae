# frozen_string_literal: true

require_relative "../test_helper"

# Requests that reach what an app hides: paths only its own pages link to,
# and (`ruzzy --session=N rack`) a resource an earlier request of the same
# input created.
class TestWebRequests < Minitest::Test
  DOC = File.join(RuzzyTestHelper::ROOT, "docs", "web-apps.md")

  def docs_app
    File.read(DOC)[/^```ruby\n(# projects\.rb\n.*?)^```$/m, 1] or flunk "docs/web-apps.md has no projects.rb"
  end

  # Pages found by the digest of their path: no comparison and no literal
  # names a path; only the links of the pages do (Web::Links).
  DIGEST_APP = <<~RUBY
    require "digest"
    PAGES = {
      Digest::SHA256.hexdigest("/") => '<a href="/catalog/index">catalog</a>',
      Digest::SHA256.hexdigest("/catalog/index") => '<a href="/catalog/item-detail-view">item</a>',
      Digest::SHA256.hexdigest("/catalog/item-detail-view") => :broken
    }.freeze
    APP = lambda do |env|
      page = PAGES[Digest::SHA256.hexdigest(env["PATH_INFO"])]
      raise "detail view broken" if page == :broken

      page ? [200, { "content-type" => "text/html" }, [page]] : [404, {}, ["not found"]]
    end
  RUBY

  def test_a_path_only_the_apps_own_pages_link_to_is_reached
    prerequisite!(system(RbConfig.ruby, "-e", "require 'rack'", err: File::NULL), "Debian's ruby-rack")
    in_tmpdir do |dir|
      File.write(File.join(dir, "pages.rb"), DIGEST_APP)
      File.write(File.join(dir, "config.ru"), "require_relative \"pages\"\nrun APP\n")
      # seed 1: found after 24,470 inputs (none in 200,000 without the links)
      result = ruzzy("--no-literal-dict", "rack", "config.ru", "-seed=1", "-runs=400000", chdir: dir)
      assert_exit 77, result
      assert_match(/^RuntimeError: detail view broken$/, result.output)
      assert_match(%r{curl -i -X \S+ http://localhost:9292/catalog/item-detail-view}, result.output)
    end
  end

  # The app is docs/web-apps.md's own (read from the page, so the guide's
  # example is what is tested): its export fails only for a project a
  # request of the same input created before, kept in the session cookie
  # that request set (nothing outlives the input, so it replays alone).
  def test_a_bug_behind_a_resource_made_by_an_earlier_request_is_found_and_shown_as_sent
    prerequisite!(system(RbConfig.ruby, "-e", "require 'sinatra/base'", err: File::NULL),
                  "Debian's ruby-sinatra (bin/setup installs it)")
    in_tmpdir do |dir|
      File.write(File.join(dir, "projects.rb"), docs_app)
      # (Rack 2.2, Debian 12's, has a bug of its own that an empty
      # X-Forwarded-Host header reaches: NoMethodError, ignored here.)
      result = ruzzy("--session=3", "--ignore=NoMethodError", "rack", "projects.rb", "-seed=1", "-runs=40000",
                     chdir: dir)
      assert_exit 77, result
      assert_match(%r{^INFO: ruzzy rack: 2 routes: POST /projects, GET /projects/:id/export; sessions of up to 3},
                   result.output)
      assert_match(/^KeyError: key not found: "owner"$/, result.output)
      # (A body with bytes a shell argument cannot hold is piped from printf.)
      sent = result.output[/^The requests, in order, as curl commands.*?\n((?:  (?:printf .*\| )?curl .*\n)+)/, 1]
                   .to_s.lines
      # The URL is quoted when its query string needs it.
      created = sent.index { |line| line.match?(%r{-X POST '?http://localhost:9292/projects(?:[ ?']|$)}) }
      # (The last request is the one that failed; an export before it may have been a 404.)
      exported = sent.rindex { |line| line.match?(%r{-X GET '?http://localhost:9292/projects/\d+/export(?:[ ?']|$)}) }
      assert created && exported && created < exported, "a POST /projects before the export:\n#{result.output}"
      id = sent[exported][%r{/projects/(\d+)/export}, 1].to_i
      assert_operator id, :>=, 1_000_000, "the id the POST returned"
      assert_match(/-H 'Cookie: rack\.session=/, sent[exported], "the session cookie the POST set")
      replayed = ruzzy("--session=3", "--ignore=NoMethodError", "rack", "projects.rb", artifacts(dir).first,
                       chdir: dir)
      assert_exit 77, replayed
      assert_match(/^KeyError: key not found: "owner"$/, replayed.output)
    end
  end
end

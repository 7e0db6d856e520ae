# frozen_string_literal: true

require_relative "../test_helper"

# `ruzzy --session=N rack`: an input is a sequence of requests, each given
# what the earlier responses returned. The app is docs/web-apps.md's own
# (read from the page, so the guide's example is what is tested): its
# export fails only for a project a request created before.
class TestWebSessions < Minitest::Test
  DOC = File.join(RuzzyTestHelper::ROOT, "docs", "web-apps.md")

  def docs_app
    File.read(DOC)[/^```ruby\n(# projects\.rb\n.*?)^```$/m, 1] or flunk "docs/web-apps.md has no projects.rb"
  end

  def test_a_bug_behind_a_resource_made_by_an_earlier_request_is_found_and_shown_as_sent
    prerequisite!(system(RbConfig.ruby, "-e", "require 'sinatra/base'", err: File::NULL),
                  "Debian's ruby-sinatra (bin/setup installs it)")
    in_tmpdir do |dir|
      File.write(File.join(dir, "projects.rb"), docs_app)
      result = ruzzy("--session=3", "rack", "projects.rb", "-seed=1", "-runs=40000", chdir: dir)
      assert_exit 77, result
      assert_match(%r{^INFO: ruzzy rack: 2 routes: POST /projects, GET /projects/:id/export; sessions of up to 3},
                   result.output)
      assert_match(/^KeyError: key not found: "owner"$/, result.output)
      sent = result.output[/^The requests, in order, as curl commands.*?\n((?:  curl .*\n)+)/, 1].to_s.lines
      created = sent.index { |line| line.include?("-X POST http://localhost:3000/projects") }
      exported = sent.index { |line| line.match?(%r{-X GET http://localhost:3000/projects/(\d+)/export$}) }
      assert created && exported && created < exported, "a POST /projects before the export:\n#{result.output}"
      id = sent[exported][%r{/projects/(\d+)/export}, 1].to_i
      assert_operator id, :>=, 1000, "the id the POST returned"
    end
  end
end

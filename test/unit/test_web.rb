# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"
require "rack"
require "rack/mock"
require "fileutils"
require "tmpdir"

# Web applications (docs/web-apps.md): requests decoded from any bytes reach
# a Rack app as well-formed requests, routes are read from the frameworks,
# the oracle tells server errors from client errors, the database is rolled
# back, and a finding is shown as curl and as a test.
class TestWeb < Minitest::Test
  W = Ruzzy::Web

  def request(**parts)
    W::Request.new(verb: "GET", path: "/", query: {}, headers: {}, cookies: {}, body: nil, content_type: nil, **parts)
  end

  def test_every_input_decodes_into_a_request_rack_accepts
    requests = W::RequestGen.new(W::Routes.parse(["POST /projects/:id/notes", "GET /users/:name", "ANY /a"]))
    arguments = Ruzzy::Gen::Arguments.new([requests], "test")
    random = Random.new(1)
    seen = []
    ([""] + Array.new(2_000) { random.bytes(random.rand(0..200)) }).each do |data|
      trees = arguments.decode(data)
      value = arguments.values(trees).first
      env = value.to_env
      assert_includes W::RequestGen::VERBS, env["REQUEST_METHOD"]
      assert env["PATH_INFO"].start_with?("/"), env["PATH_INFO"].inspect
      rack = Rack::Request.new(env)
      assert_kind_of Hash, rack.GET
      assert_kind_of Hash, rack.cookies
      assert_equal trees.inspect, arguments.decode(arguments.encode(trees)).inspect
      seen << env["PATH_INFO"][%r{\A/(projects|users|a)\b}, 1]
    end
    assert_equal %w[a projects users], seen.compact.uniq.sort
  end

  def test_a_route_template_is_filled_with_escaped_values
    route = W::Routes.parse(["GET /files/:dir/*path(.:format)"]).first
    assert_equal %w[dir path], route.params
    assert_equal "/files/..%2Fruzzy/x%20y", route.fill(["../ruzzy", "x y"])
    assert_equal "/files/1/1", route.fill([])
  end

  def test_routes_given_badly_raise_what_to_write
    error = assert_raises(ArgumentError) { W::Routes.parse(["/no-verb"]) }
    assert_match(%r{"VERB /path"}, error.message)
    assert_raises(Ruzzy::InvalidArgumentsError) { W::Routes.parse("GET /") }
  end

  def test_a_server_error_is_a_finding_a_client_error_is_not
    app = lambda do |env|
      case env["PATH_INFO"]
      when "/boom" then raise KeyError, "missing"
      when "/rendered" then env["sinatra.error"] = ArgumentError.new("kept")
                            [500, {}, ["oops"]]
      when "/bare" then [503, {}, []]
      when "/failsafe" then env["sinatra.error"] = Class.new(StandardError) { def http_status = 404 }.new
                            [500, {}, ["failsafe"]]
      when "/teapot" then [418, {}, []]
      else [200, {}, ["ok"]]
      end
    end
    target = W::RackTarget.new(app)
    assert_raises(KeyError) { target.call(request(path: "/boom")) }
    assert_equal "kept", assert_raises(ArgumentError) { target.call(request(path: "/rendered")) }.message
    assert_equal "GET /bare answered 503", assert_raises(W::ServerErrorResponse) {
                                             target.call(request(path: "/bare"))
                                           }.message
    # The error page of a 404 failed: the 500 is the finding, not the 404.
    assert_match(/answered 500 while rendering the error page of .* \(a 404\)/,
                 assert_raises(W::ServerErrorResponse) { target.call(request(path: "/failsafe")) }.message)
    assert_nil target.call(request(path: "/teapot"))
    assert_nil target.call(request(path: "/"))
  end

  def test_an_exception_with_a_client_status_is_not_a_finding
    not_found = Class.new(StandardError) { def http_status = 404 }
    assert_nil W::RackTarget.new(->(_env) { raise not_found }).call(request)
  end

  def test_the_oracle_decides_with_the_request_and_the_response
    seen = []
    oracle = lambda do |req, response|
      seen << [req.path, response.status, response.body]
      response.body.include?("secret")
    end
    target = W::RackTarget.new(->(env) { [200, {}, [env["PATH_INFO"] == "/leak" ? "secret" : "fine"]] }, oracle:)
    assert_nil target.call(request(path: "/"))
    assert_raises(W::ServerErrorResponse) { target.call(request(path: "/leak")) }
    assert_equal [["/", 200, "fine"], ["/leak", 200, "secret"]], seen
  end

  def test_bad_arguments_say_what_is_wrong
    assert_raises(Ruzzy::InvalidTargetError) { W::RackTarget.new(Object.new) }
    assert_raises(Ruzzy::InvalidArgumentsError) { W::RackTarget.new(->(_) {}, statuses: 5) }
    assert_raises(Ruzzy::InvalidArgumentsError) { W::RackTarget.new(->(_) {}, oracle: 5) }
  end

  def test_the_body_is_read_and_closed
    closed = false
    body = Object.new
    body.define_singleton_method(:each) { |&block| block.call("a") }
    body.define_singleton_method(:close) { closed = true }
    W::RackTarget.new(->(_env) { [200, {}, body] }).call(request)
    assert closed
  end

  def test_a_request_is_the_same_through_curl_rack_test_and_rack
    req = request(verb: "POST", path: "/notes/a%20b", query: { "q[x]" => "1 2" }, headers: { "X-Api-Key" => "k" },
                  cookies: { "prefs" => "a;b" }, body: "{\"n\":1}", content_type: "application/json")
    env = req.to_env
    rack = Rack::Request.new(env)
    assert_equal({ "q" => { "x" => "1 2" } }, rack.GET)
    assert_equal({ "prefs" => "a;b" }, rack.cookies)
    assert_equal "k", env["HTTP_X_API_KEY"]
    assert_equal "{\"n\":1}", rack.body.read
    assert_equal "application/json", rack.content_type
    curl = req.to_curl
    assert_includes curl, "'http://localhost:9292/notes/a%20b?q[x]=1%202'"
    assert_includes curl, "--data-binary '{\"n\":1}'"
    test = req.to_rack_test("->(env) { [200, {}, []] }")
    assert_includes test, "custom_request \"POST\", \"/notes/a%20b?q[x]=1%202\""
    assert_includes test, "\"HTTP_COOKIE\" => \"prefs=a%3Bb\""
  end

  # A finding's curl commands go to the port of the server the app is
  # usually run with, and say which: rackup's for a config.ru or a modular
  # Sinatra app, Sinatra's own for a classic one, `bin/rails server`'s for
  # a Rails application (test_web_rails checks that one).
  def test_curl_commands_name_the_server_they_expect
    assert_equal "http://localhost:9292", W.server(->(_env) { [200, {}, []] }).url
    text = W.describe([request(path: "/a")], "APP", W::Server.new("ruby app.rb", 4567))
    assert_equal "The request, as a curl command against the app's server (ruby app.rb, port 4567):",
                 text.lines.first.chomp
    assert_equal "  curl -i -X GET http://localhost:4567/a", text.lines[1].chomp
    script = <<~RUBY
      require "sinatra/base"
      require "ruzzy"
      class Modular < Sinatra::Base; end
      print Ruzzy::Web.server(Sinatra::Application).url, " ", Ruzzy::Web.server(Modular).url, "\n",
            Ruzzy::Web.server(Modular)
    RUBY
    out = run_command(RbConfig.ruby, "-e", script)
    assert_exit 0, out
    # A modular app's file need not have a config.ru beside it: said.
    assert_equal "http://localhost:4567 http://localhost:9292\nrackup with a config.ru of `run Modular`, port 9292",
                 out.stdout
  end

  def test_the_rack_test_snippet_runs
    skip_unless_rack_test
    req = request(verb: "PUT", path: "/x", body: "b", content_type: "text/plain")
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "finding_test.rb"),
                 req.to_rack_test("->(env) { [env[\"rack.input\"].read == \"b\" ? 200 : 500, {}, []] }"))
      output = IO.popen([RbConfig.ruby, File.join(dir, "finding_test.rb")], err: %i[child out], &:read)
      assert_match(/1 runs, \d+ assertions, 0 failures, 0 errors/, output)
    end
  end

  def test_an_app_is_loaded_from_a_rackup_file_or_a_ruby_file
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), "run ->(env) { [200, {}, [ENV['RACK_ENV'].to_s]] }\n")
      app = W::AppLoader.load(dir)
      assert_equal [200, {}, [ENV.fetch("RACK_ENV")]], app.call({})
      File.write(File.join(dir, "notes.rb"),
                 "class Notes; def call(_env) = [204, {}, []]; end\nAPP = Notes.new unless defined?(APP)\n")
      assert_equal 204, W::AppLoader.load(File.join(dir, "notes.rb")).call({}).first
      error = assert_raises(RuntimeError) { W::AppLoader.load(File.join(dir, "missing.ru")) }
      assert_match(/no such app/, error.message)
    end
  end

  # `ruzzy rack` traces the app's own files only, and says so; --include
  # chooses instead (--include=/ every file, Rack's too).
  def test_ruzzy_rack_traces_the_apps_own_files_unless_told
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), <<~RUBY)
        require "rack"
        run Rack::Lint.new(->(env) { [env["PATH_INFO"] == "/a" ? 201 : 200, {}, ["ok"]] })
      RUBY
      counted = lambda do |*flags|
        result = ruzzy(*flags, "rack", "config.ru", "-seed=1", "-runs=50", chdir: dir)
        assert_exit 0, result
        [result.output, Integer(result.output[/(\d+) lines and branch arms of instrumented code/, 1])]
      end
      own, own_units = counted.call
      root = Regexp.escape(File.realpath(dir))
      assert_match(%r{^INFO: ruzzy rack: coverage of the app's own files \(#{root}/\)}, own)
      every, every_units = counted.call("--include=/")
      refute_match(/coverage of the app's own files/, every)
      assert_operator own_units * 10, :<, every_units, "Rack::Lint and Rack are traced with --include=/ only"
    end
  end

  # A finding's request is shrunk (a typed target) and the shrunk one is
  # shown as a web developer replays it, curl and a test, before the
  # report of the request first sent.
  def test_the_shrunk_request_is_shown_as_curl_and_as_a_test
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), <<~RUBY)
        run(lambda do |env|
          raise ArgumentError, "no posts" if env["REQUEST_METHOD"] == "POST"
          [200, {}, ["ok"]]
        end)
      RUBY
      result = ruzzy("rack", "config.ru", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 77, result
      shrunk = result.stderr[/^ruzzy: the shrunk arguments, run again:\n(.*?)(?=^==\d+== ERROR)/m, 1].to_s
      shown = /\AThe request, as a curl command against the app's server \(rackup, port 9292\):\n  curl -i -X POST /
      assert_match(shown, shrunk, result.stderr)
      assert_match(/custom_request "POST", /, shrunk)
      first = result.stderr[/^==\d+== ERROR.*?^  (curl [^\n]*)/m, 1].to_s
      assert_operator shrunk[/^  (curl [^\n]*)/, 1].size, :<=, first.size, "shrunk, not larger: #{first}"
    end
  end

  # A Sinatra app that subclasses another with routes serves both sets:
  # the app is the subclass, and every route is read. (In a child process:
  # Sinatra classes stay in this one's ObjectSpace.)
  def test_a_sinatra_subclass_is_the_app_and_its_parents_routes_are_read
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "app.rb"), <<~RUBY)
        require "sinatra/base"
        class BaseApp < Sinatra::Base
          get("/health") { "ok" }
        end
        class MyApp < BaseApp
          get("/items/:id") { "item" }
        end
      RUBY
      script = "app = Ruzzy::Web::AppLoader.load(ARGV[0]); puts app, Ruzzy::Web::Routes.discover.map(&:to_s).sort"
      loaded = ruby("-rruzzy", "-e", script, File.join(dir, "app.rb"))
      assert loaded.status.success?, loaded.stderr
      assert_equal ["MyApp", "GET /health", "GET /items/:id"], loaded.stdout.lines.map(&:chomp)
    end
  end

  # A harness that requires a Sinatra app without RACK_ENV loads it in the
  # development environment, whose 404 page fails on a path that is not
  # UTF-8 (a false finding): the INFO line says so and what to do. (In a
  # child process.)
  def test_a_sinatra_app_in_the_development_environment_is_named
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "app.rb"), "require 'sinatra/base'\nclass DevApp < Sinatra::Base\nend\n")
      script = "require_relative ARGV[0]; puts Ruzzy::Web.test_mode!"
      [[{ "RACK_ENV" => nil, "APP_ENV" => nil }, true], [{ "RACK_ENV" => "test", "APP_ENV" => nil }, false]]
        .each do |env, named|
        loaded = ruby("-rruzzy", "-e", script, File.join(dir, "app.rb"), env:)
        assert loaded.status.success?, loaded.stderr
        note = "a Sinatra app runs in the development environment, whose own error pages can fail: " \
               'set ENV["RACK_ENV"] = "test" before requiring it'
        assert_equal named, loaded.stdout.lines.map(&:chomp).include?(note), loaded.stdout
      end
    end
  end

  # Each Sinatra route's names are those of its own block, and a request
  # to it is named mostly with them: the key a route reads is one choice
  # among its few names, not among all the app's. (In a child process.)
  def test_a_route_has_the_names_of_its_own_code_and_its_requests_use_them
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "app.rb"), <<~RUBY)
        require "sinatra/base"
        class NamedApp < Sinatra::Base
          post "/projects/:id/search" do
            JSON.parse(request.body.read)["query"].to_s
          end

          get "/preferences" do
            request.cookies["prefs"].to_s + params[:theme].to_s
          end

          get("/other") { %w[alpha beta gamma delta epsilon zeta eta theta iota kappa].join }
        end
      RUBY
      script = <<~'RUBY'
        Ruzzy::Web::AppLoader.load(ARGV[0])
        gen = Ruzzy::Gen.request
        gen.routes.each { |route| puts "#{route} #{route.names.join(",")}" }
        random = Random.new(3)
        requests = Array.new(3_000) { Ruzzy::Web::RequestGen.requests_of(gen, random.bytes(random.rand(8..120))).first }
        search = requests.select { |one| one.verb == "POST" && one.path.match?(%r{\A/projects/[^/]+/search\z}) }
        queried = search.count { |one| one.body.to_s.match?(/\A\{.*"query":/m) }
        preferences = requests.select { |one| one.path == "/preferences" }
        puts "search #{queried}/#{search.size}", "prefs #{preferences.count { |one| one.cookies.key?("prefs") }}/#{preferences.size}"
      RUBY
      loaded = ruby("-rruzzy", "-e", script, File.join(dir, "app.rb"))
      assert loaded.status.success?, loaded.stderr
      assert_named_requests(loaded.stdout.lines.map(&:chomp))
    end
  end

  # A header a route's code reads (`request.env["HTTP_X_API_VERSION"]`)
  # is sent to that route often, not as one of every header name the app
  # mentions; a route that reads none gets no header of its own. (In a
  # child process.)
  def test_a_route_gets_the_headers_its_code_reads
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "app.rb"), <<~RUBY)
        require "sinatra/base"
        class HeaderApp < Sinatra::Base
          get("/api/items") { request.env["HTTP_X_API_VERSION"] == "2" ? "v2" : "v1" }
          get("/other") { request.env["HTTP_X_TRACE_ID"].to_s + %w[alpha beta gamma].join }
          get("/plain") { "plain" }
        end
      RUBY
      script = <<~'RUBY'
        Ruzzy::Web::AppLoader.load(ARGV[0])
        gen = Ruzzy::Gen.request
        random = Random.new(5)
        requests = Array.new(3_000) { Ruzzy::Web::RequestGen.requests_of(gen, random.bytes(random.rand(8..120))).first }
        %w[/api/items /plain].each do |path|
          to = requests.select { |one| one.path == path }
          puts "#{path} #{to.count { |one| one.headers.key?("X-Api-Version") }}/#{to.size}"
        end
      RUBY
      loaded = ruby("-rruzzy", "-e", script, File.join(dir, "app.rb"))
      assert loaded.status.success?, loaded.stderr
      assert_route_headers(loaded.stdout)
    end
  end

  # +text+: "PATH WITH/ALL" lines, requests to PATH with the header.
  def assert_route_headers(text)
    counts = text.lines.to_h { |line| line.split.then { |path, count| [path, count.split("/").map(&:to_i)] } }
    versioned, items = counts.fetch("/api/items")
    plain, plains = counts.fetch("/plain")
    assert_operator items, :>, 100, text
    # One of two header names of the app, among the 15 known, in 1 of 3
    # requests: about 1 in 50 without the route's own headers.
    assert_operator versioned * 8, :>, items, text
    assert_operator plain * 8, :<, plains, text
  end

  def assert_named_requests(lines)
    assert_includes lines, "POST /projects/:id/search query,id"
    assert_includes lines, "GET /preferences prefs,theme"
    queried, search = lines.grep(/\Asearch /).first.split.last.split("/").map(&:to_i)
    prefs, preferences = lines.grep(/\Aprefs /).first.split.last.split("/").map(&:to_i)
    assert_operator search, :>, 100, lines.inspect
    # Without the route's names: under 1 in 50 (a free key, or one of the
    # app's names, 4 keys at most); with them above 1 in 10.
    assert_operator queried * 10, :>, search, lines.inspect
    assert_operator prefs * 10, :>, preferences, lines.inspect
  end

  def test_a_session_carries_cookies_ids_links_and_the_csrf_token
    seen = []
    app = lambda do |env|
      seen << [env["PATH_INFO"], env["HTTP_COOKIE"], env["HTTP_X_CSRF_TOKEN"]]
      case env["PATH_INFO"]
      when "/login" then [200, { "set-cookie" => "user=ad%20min; path=/" }, ['<meta name="csrf-token" content="t0k">']]
      when "/projects" then [201, { "location" => "http://example.org/projects/42" }, ['{"project":{"id":7}}']]
      when "/projects/7" then [200, {}, ['<a href="/projects/7/export">export</a>']]
      when "/projects/7/export" then raise IndexError, "export"
      else [404, {}, []]
      end
    end
    route = W::Routes.parse(["GET /projects/:id"]).first
    requests = [request(verb: "POST", path: "/login"), request(verb: "POST", path: "/projects"),
                request(path: W::LatePath.new(route, [W::Earlier.new(1)])),
                request(path: W::LatePath.new(nil, [W::Earlier.new(1)]))]
    target = W::RackTarget.new(app)
    error = assert_raises(IndexError) { target.call(requests) }
    assert_equal [["/login", nil, nil], ["/projects", "user=ad%20min", "t0k"], ["/projects/7", "user=ad%20min", "t0k"],
                  ["/projects/7/export", "user=ad%20min", "t0k"]], seen
    GC.start # the requests live as long as the exception, not as long as a weak map keeps them
    sent = target.sent_for(error)
    assert_equal %w[/login /projects /projects/7 /projects/7/export], sent.map(&:path)
    text = W.describe(sent, "APP")
    assert_includes text, "curl -i -X GET http://localhost:9292/projects/7/export " \
                          "-H 'X-CSRF-Token: t0k' -H 'Cookie: user=ad%20min'"
    assert_equal 4, text.scan("custom_request").size
  end

  def test_a_session_input_decodes_into_requests_that_refer_to_earlier_responses
    gen = Ruzzy::Gen.request(routes: ["GET /projects/:id"], session: 3)
    random = Random.new(2)
    values = Array.new(500) { W::RequestGen.requests_of(gen, random.bytes(random.rand(0..300))) }
    assert(values.all? { |list| list.size <= 3 && list.all?(W::Request) })
    assert(values.flatten.any? { |one| one.path.is_a?(W::LatePath) })
    assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy::Gen.request(session: 9) }
  end

  def test_an_openapi_description_gives_routes_and_their_body_keys
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "public"))
      File.write(File.join(dir, "public", "openapi.yaml"), <<~YAML)
        openapi: 3.0.0
        paths:
          /projects/{project_id}/notes:
            post:
              requestBody:
                content:
                  application/json:
                    schema: { $ref: "#/components/schemas/Note" }
            get: {}
        components:
          schemas:
            Note: { type: object, properties: { title: { type: string }, pinned: { type: boolean } } }
      YAML
      file = W::Routes.openapi_file(dir)
      assert_equal File.join(dir, "public", "openapi.yaml"), file
      routes = W::Routes.openapi(file)
      assert_equal({ "POST /projects/:project_id/notes" => %w[title pinned], "GET /projects/:project_id/notes" => [] },
                   routes.to_h { |route| [route.to_s, route.body_keys] })
      gen = Ruzzy::Gen.request(routes: [], openapi: file)
      random = Random.new(3)
      bodies = Array.new(400) { W::RequestGen.requests_of(gen, random.bytes(random.rand(20..200))).first }
                    .select { |one| one.verb == "POST" && one.path.start_with?("/projects/") }.map(&:body)
      assert(bodies.any? { |body| body&.start_with?('{"title":') }, bodies.first(5).inspect)
      File.write(file, "paths: [1")
      assert_raises(Ruzzy::InvalidArgumentsError) { W::Routes.openapi(file) }
    end
  end

  def test_an_app_with_hundreds_of_routes_has_each_reached
    routes = Array.new(700) { |index| "GET /page#{index}/:id" }
    gen = Ruzzy::Gen.request(routes:)
    paths = Array.new(3000) { |index| W::RequestGen.requests_of(gen, [index].pack("n") * 8).first.path }
    reached = paths.filter_map { |path| path[%r{\A/page(\d+)/}, 1]&.to_i }.uniq
    assert_operator reached.size, :>, 100
    assert_operator reached.max, :>=, 600, "routes past the first 256 are reached"
  end

  def test_keys_are_names_the_app_code_mentions_and_values_may_be_canaries
    Dir.mktmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "app", "controllers"))
      FileUtils.mkdir_p(File.join(dir, "vendor"))
      File.write(File.join(dir, "app", "controllers", "notes.rb"), <<~RUBY)
        # Reads the note: comments say words that are not names.
        note = params.require(:note).permit(:title, tags: [])
        prefs = cookies["prefs"] || request.get_header("HTTP_X_API_TOKEN")
        json(error: "a message with spaces", id: note[:title]) # title again
      RUBY
      File.write(File.join(dir, "vendor", "gem.rb"), "params[:vendored]\n")
      names = W::Names.of([dir])
      assert_equal %w[title prefs HTTP_X_API_TOKEN note tags error id], names
      assert_equal ["X-Api-Token"], W::Names.headers(names)
      assert_equal names, W::Names.of([dir, dir]), "the same files give the same list"

      gen = Ruzzy::Gen.request(routes: ["POST /notes"], names:)
      random = Random.new(5)
      requests = Array.new(600) { W::RequestGen.requests_of(gen, random.bytes(random.rand(20..200))).first }
      keys = requests.flat_map { |one| one.query.keys + one.cookies.keys + one.headers.keys }
      values = requests.flat_map { |one| one.query.values + one.cookies.values + one.headers.values }
      assert_includes values, "../ruzzy", "a detector's canary is a value"
      assert_includes keys, "note"
      assert_includes keys, "X-Api-Token"
      assert(keys.any? { |key| !names.include?(key) && !W::RequestGen::HEADERS.include?(key) }, "free keys too")
      assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy::Gen.request(routes: [], names: "note") }
    end
  end

  def test_values_may_end_in_a_canary_and_each_detector_is_as_likely
    gen = Ruzzy::Gen.request(routes: ["POST /notes"], names: %w[note])
    random = Random.new(5)
    values = Array.new(2000) { W::RequestGen.requests_of(gen, random.bytes(random.rand(20..200))).first }
                  .flat_map { |one| one.query.values + one.cookies.values + one.headers.values }
    forms = Ruzzy::Detectors.payloads.flatten
    assert(values.any? { |value| !forms.include?(value) && forms.any? { |form| value.end_with?(form) } },
           "text ending in a canary")
    # Path traversal's 3 forms are chosen about as often as 6 of command
    # injection's 7 (half as often were each form as likely as the next).
    traversal = values.count { |value| Ruzzy::Detectors::PathTraversal::WORDS.include?(value) }
    command = values.count { |value| Ruzzy::Detectors::CommandInjection::WORDS[1..].include?(value) }
    assert_operator traversal * 4, :>, command * 3, [traversal, command]
  end

  # libFuzzer's value profile, on for typed targets, is left off for
  # requests (their ids fill the corpus), unless the user turns it on.
  def test_requests_are_fuzzed_without_value_profile_unless_asked
    typed = ->(*gens, args: ["prog"]) { Ruzzy::Gen::TypedTarget.for_fuzz(->(*) {}, gens, args, Ruzzy.session).last }
    request = Ruzzy::Gen.request(routes: ["GET /notes/:id"], names: [])
    assert_includes typed.call(Ruzzy::Gen.string), "-use_value_profile=1"
    refute(typed.call(request).any? { |arg| arg.start_with?("-use_value_profile") })
    refute(typed.call(Ruzzy::Gen.string, Ruzzy::Gen.request(routes: ["GET /"], session: 2, names: []))
           .any? { |arg| arg.start_with?("-use_value_profile") })
    assert_includes typed.call(request, args: ["prog", "-use_value_profile=1"]), "-use_value_profile=1"
  end

  def test_a_header_no_server_passes_on_is_said_to_be_reproduced_by_the_test
    text = W.describe([request(headers: { "Accept" => "\0\0" })], "APP")
    assert_match(/NUL, CR or LF byte.*the test below reproduces the finding/, text)
    refute_match(/NUL, CR or LF/, W.describe([request(headers: { "Accept" => "text/html" })], "APP"))
  end

  def test_an_app_without_a_database_for_its_environment_is_told_what_to_set
    error = RuntimeError.new("The test database is not configured for the `test` environment.")
    assert_match(/set RAILS_ENV to an environment it configures/, W::AppLoader.load_error_hint(error))
    assert_nil W::AppLoader.load_error_hint(RuntimeError.new("other"))
  end

  def skip_unless_rack_test
    require "rack/test"
  end
end

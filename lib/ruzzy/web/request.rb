# frozen_string_literal: true

require "json"
require "stringio"

module Ruzzy
  # Web applications (see web.rb).
  module Web
    # Where a finding's curl commands send their requests: the server an
    # app's usual launcher starts (Web.server), by default rackup's.
    Server = Struct.new(:launcher, :port) do
      def url = "http://localhost:#{port}"
      def to_s = "#{launcher}, port #{port}"
    end
    Server::RACKUP = Server.new("rackup", 9292).freeze

    # One HTTP request, as a fuzz input decodes into (Gen.request) and as a
    # finding is shown: +verb+ ("GET"), +path+ (escaped, from "/"), +query+,
    # +headers+ and +cookies+ (Hashes of Strings), +body+ (a String or nil)
    # and its +content_type+.
    #
    # Invariants: to_env builds a Rack environment without parsing anything
    # the fuzzer wrote (no URI.parse, which would reject most paths), so
    # every request reaches the app; to_curl and to_rack_test send the same
    # method, path, query, headers, cookies and body.
    Request = Struct.new(:verb, :path, :query, :headers, :cookies, :body, :content_type, keyword_init: true) do
      # The query string (form-encoded, nested keys written as given).
      def query_string = Web.form_encode(query)

      # The path with its query string.
      def target
        text = query_string
        text.empty? ? path : "#{path}?#{text}"
      end

      # The Cookie header's value, each value escaped as Rack unescapes it.
      def cookie_header
        cookies.map { |name, value| "#{Web.escape(name)}=#{Web.escape(value)}" }.join("; ")
      end

      # A Rack environment for this request, from +base+ (the server's
      # keys: Rack::MockRequest.env_for's when Rack is loaded).
      def to_env(base = Web.base_env)
        env = base.merge("REQUEST_METHOD" => verb, "PATH_INFO" => path, "QUERY_STRING" => query_string)
        # A server passes a header's value on as bytes (Rack's SPEC).
        headers.each { |name, value| env[Web.header_key(name)] = value.to_s.b }
        env["HTTP_COOKIE"] = cookie_header unless cookies.empty?
        input = (body || "").b
        env["rack.input"] = StringIO.new(input)
        env["CONTENT_LENGTH"] = input.bytesize.to_s if body
        env["CONTENT_TYPE"] = content_type if content_type
        env
      end

      # Whether a header or cookie holds a byte no command line or server
      # passes on as it is (NUL, CR, LF): then only the test reproduces it.
      def unsendable? = [*headers.to_a.flatten, *cookies.to_a.flatten].any? { |text| text.to_s.match?(/[\0\r\n]/) }

      # The request as a curl command against a server at +base_url+ (a
      # body with bytes a shell argument cannot hold is piped from printf).
      def to_curl(base_url = Server::RACKUP.url)
        words = ["curl", "-i", "-X", verb, "#{base_url}#{target}"]
        headers.each { |name, value| words += ["-H", "#{name}: #{value}"] }
        words += ["-H", "Cookie: #{cookie_header}"] unless cookies.empty?
        words += ["-H", "Content-Type: #{content_type}"] if content_type
        return words.map { |word| Web.shell_word(word) }.join(" ") unless body

        printable = body.b.match?(/\A[\x20-\x7e\t\n]*\z/n)
        words += ["--data-binary", printable ? body : "@-"]
        command = words.map { |word| Web.shell_word(word) }.join(" ")
        printable ? command : "printf '%b' #{Web.shell_word(Web.printf_escape(body))} | #{command}"
      end

      # A Minitest test (Rack::Test) that sends this request to the app and
      # expects no server error: paste it into the app's test suite.
      def to_rack_test(app_expression = "app") = Web.rack_test([self], app_expression)
    end

    # Keys a Rack environment has besides the request's own: the server's.
    BASE_ENV = {
      "SCRIPT_NAME" => "", "SERVER_NAME" => "example.org", "SERVER_PORT" => "80",
      "SERVER_PROTOCOL" => "HTTP/1.1", "HTTP_HOST" => "example.org",
      "rack.url_scheme" => "http", "rack.errors" => $stderr, "rack.multithread" => false,
      "rack.multiprocess" => true, "rack.run_once" => false, "rack.version" => [1, 3],
      "REMOTE_ADDR" => "127.0.0.1"
    }.freeze

    # Headers a Rack environment keeps without the HTTP_ prefix.
    UNPREFIXED = %w[CONTENT_TYPE CONTENT_LENGTH].freeze

    module_function

    # The server's keys of a Rack environment (Rack's own when loaded).
    def base_env
      return BASE_ENV unless defined?(::Rack::MockRequest)

      mock = ::Rack::MockRequest.env_for("/").except("rack.input", "PATH_INFO", "QUERY_STRING")
      { "REMOTE_ADDR" => "127.0.0.1" }.merge(mock)
    end

    # +word+ as one shell word: as it is when nothing in it is special,
    # else in single quotes.
    def shell_word(word)
      text = word.to_s
      return text if text.match?(%r{\A[A-Za-z0-9_\-.,/:=@%+]+\z})

      "'#{text.gsub("'", "'\\\\''")}'"
    end

    # +bytes+ for printf's %b: bytes outside printable ASCII (and the
    # backslash) as \0NNN.
    def printf_escape(bytes)
      bytes.b.gsub(/[^\x20-\x5b\x5d-\x7e]/n) { |byte| format("\\0%03o", byte.ord) }
    end

    # The Rack environment key of the header +name+ (HTTP_X_API_KEY).
    def header_key(name)
      key = name.upcase.tr("-", "_")
      UNPREFIXED.include?(key) ? key : "HTTP_#{key}"
    end

    # +text+ escaped as a form component (bytes other than A-Z a-z 0-9
    # -._~ as %XX).
    def escape(text)
      text.to_s.b.gsub(/[^A-Za-z0-9\-._~]/n) { |byte| format("%%%02X", byte.ord) }
    end

    # A Hash written as a form (name=value&...), names and values escaped
    # except the brackets of nested names (user[name]).
    def form_encode(pairs)
      pairs.map { |name, value| "#{escape(name).gsub("%5B", "[").gsub("%5D", "]")}=#{escape(value)}" }.join("&")
    end

    # A Minitest test (Rack::Test) that sends +requests+ in order to the
    # app (+app_expression+) and expects no server error.
    def rack_test(requests, app_expression)
      calls = requests.map do |request|
        "    #{rack_test_call(request)}
"
      end.join("    assert_operator last_response.status, :<, 500\n")
      <<~RUBY
        require "minitest/autorun"
        require "rack/test"
        # and the app (your test helper)

        class FuzzFindingTest < Minitest::Test
          include Rack::Test::Methods

          def app = #{app_expression}

          def test_no_server_error
        #{calls}    assert_operator last_response.status, :<, 500
          end
        end
      RUBY
    end

    # The Rack::Test call that sends +request+ (its headers, cookies and
    # content type in the environment, its body as Rack::Test's :input).
    def rack_test_call(request)
      env = request.headers.transform_keys { |name| header_key(name) }
      env["HTTP_COOKIE"] = request.cookie_header unless request.cookies.empty?
      env["CONTENT_TYPE"] = request.content_type if request.content_type
      pairs = env.map { |key, value| "#{key.inspect} => #{value.inspect}" }
      pairs << "input: #{request.body.inspect}" if request.body
      env_text = pairs.empty? ? "{}" : "{ #{pairs.join(", ")} }"
      "custom_request #{request.verb.inspect}, #{request.target.inspect}, {}, #{env_text}"
    end

    # +requests+ (as sent) as curl commands against +server+ (a
    # Web::Server) and as a test, for a finding's report.
    def describe(requests, app_expression, server = Server::RACKUP)
      many = requests.size > 1
      curl = requests.map { |request| "  #{request.to_curl(server.url)}\n" }.join
      if requests.any?(&:unsendable?)
        curl << "  (a header holds a NUL, CR or LF byte, which neither a shell nor a server passes on as it is: " \
                "the test below reproduces the finding, curl may not)\n"
      end
      "The #{many ? "requests, in order," : "request,"} as #{many ? "curl commands" : "a curl command"} " \
        "against the app's server (#{server}):\n#{curl}" \
        "and as a Minitest test (Rack::Test):\n#{rack_test(requests, app_expression).gsub(/^(?=.)/, "  ")}"
    end
  end
end

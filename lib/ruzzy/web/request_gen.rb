# frozen_string_literal: true

require "json"
require_relative "../gen"
require_relative "../detectors"
require_relative "request"
require_relative "routes"
require_relative "names"
require_relative "session"

module Ruzzy
  module Web
    # What a request input decodes into before it is a Request: the route
    # alternative ([verb, path]), the query, headers, cookies and body
    # ([content type, bytes] or nil). Regression files hold these.
    RequestParts = Struct.new(:route, :query, :headers, :cookies, :body)

    # The generator of Requests (Gen.request): every input is a well-formed
    # request, its parts in input order route, query, headers, cookies,
    # body, so libFuzzer's structure-aware mutation changes one part at a
    # time. A route's path params are digits or Strings read from the input
    # as they are; the values of the query, the headers, the cookies and
    # the body such Strings, one of the bug detectors' canary forms
    # (Detectors.payloads: "../ruzzy", ";ruzzy", "' or ruzzy or '") or a
    # String ending in one, so a value that reaches a dangerous call can be
    # the one a detector fires on. Their names are one of the names the app's code mentions (Names)
    # or a free String; a route's own parts (right after its path params)
    # are named mostly with the names of the code that answers it
    # (Route#names):
    # a name the app looks up (params["title"], cookies["prefs"]) and
    # misses is also reported to libFuzzer by the Hash hooks and written
    # into the next inputs.
    #
    # Invariant: the generator only depends on the routes and names it was
    # built with, so one corpus decodes the same way in every process of a
    # campaign.
    class RequestGen < Gen::MapGen
      VERBS = %w[GET POST PUT PATCH DELETE HEAD OPTIONS].freeze
      # Header names offered beside free ones.
      HEADERS = %w[Accept Accept-Language Authorization Content-Type Origin Referer User-Agent X-Api-Key
                   X-Forwarded-For X-Forwarded-Host X-Requested-With If-None-Match Range].freeze
      # The ids a path param is most often (the first records of a table).
      SMALL_IDS = (0..255).map(&:to_s).freeze
      # Methods whose requests carry a body.
      BODY_VERBS = %w[POST PUT PATCH DELETE].freeze
      # Content types of a raw body.
      RAW_TYPES = %w[application/json application/xml text/xml text/plain application/octet-stream
                     application/x-www-form-urlencoded].freeze
      BOUNDARY = "ruzzyformboundary"
      PARAM_LENGTH = 24
      NAME_LENGTH = 16
      VALUE_LENGTH = 48
      PAIRS = 4
      # The most alternatives of one Gen.one_of.
      CHOICES = 256
      # The most requests of one session.
      MAX_SESSION = 8

      attr_reader :routes
      # Ruby that gives the app, for a finding's test (Web.app_expression).
      attr_accessor :app_expression

      # The generator of requests to +routes+ (Route objects); with
      # +earlier+, a path param or path may be one an earlier response of
      # the session gave (Earlier).
      def initialize(routes, earlier: false, names: [], payloads: Detectors.payloads)
        @routes = routes.freeze
        @earlier = earlier
        @names = names.uniq.first(Names::MAX_NAMES).freeze
        @payloads = payloads.map(&:freeze).freeze
        parts = Gen.struct(RequestParts, route: route_gen, query: pairs_gen, headers: headers_gen,
                                         cookies: pairs_gen(max_size: 2), body: body_gen)
        super(parts, ->(value) { request_of(value) })
      end

      # One of +gens+, however many: a one_of of one_ofs of at most
      # CHOICES each when there are more (an app with hundreds of routes).
      def self.choice(gens)
        return Gen.one_of(*gens) if gens.size <= CHOICES

        choice(gens.each_slice(CHOICES).map { |slice| slice.size == 1 ? slice.first : Gen.one_of(*slice) })
      end

      # The path of the free alternative: the String as it is, from "/"
      # (so a path the app compares with is written into inputs whole),
      # bytes outside a path's escaped.
      def self.free_path(text)
        escaped = text.b.gsub(%r{[^A-Za-z0-9\-._~/]}n) { |byte| format("%%%02X", byte.ord) }
        escaped.start_with?("/") ? escaped : "/#{escaped}"
      end

      # The header name of the free String +text+: its bytes that an HTTP
      # token may hold, or "X" when none is.
      def self.header_name(text)
        name = text.b.delete("^!#$%&'*+\\-.^_`|~0-9A-Za-z")
        name.empty? ? "X" : name
      end

      # No value profile: a request's path holds ids that the framework
      # compares deep down (a record's lookup), and value profile keeps an
      # input for each id that came closer. On examples/web/rails it held
      # two thirds of the corpus, the same request under other ids, and the
      # inputs one step from a bug were picked that much less often.
      def value_profile? = false

      # The requests of the input +data+ (this generator's value, or a
      # session's list of them).
      def self.requests_of(gen, data)
        value = gen.value(gen.read(Gen::ByteReader.new(data), Gen::UNLIMITED))
        value.is_a?(Array) ? value : [value]
      end

      private

      def request_of(parts)
        verb, path, own = parts.route
        own ||= {}
        content_type, body = own[:body] || parts.body
        Request.new(verb:, path:, query: parts.query.merge(own[:query] || {}),
                    headers: parts.headers.merge(own[:headers] || {}),
                    cookies: parts.cookies.merge(own[:cookies] || {}), body:, content_type:)
      end

      # One alternative per route (per method, for a route of several),
      # then the free path: any method, any path.
      def route_gen
        routes = @routes.flat_map do |route|
          verbs = route.verbs.empty? ? Routes::ANY_VERBS : route.verbs
          verbs.map { |verb| route_alternative(verb, route) }
        end
        free = Gen.map(Gen::PairGen.new(Gen.from(VERBS), Gen.string(max_length: VALUE_LENGTH))) do |verb, text|
          [verb, RequestGen.free_path(text)]
        end
        linked = Gen.map(Gen::PairGen.new(Gen.from(VERBS), earlier_gen)) do |verb, ref|
          [verb, LatePath.new(nil, [ref])]
        end
        RequestGen.choice([*routes, free, *(linked if @earlier)])
      end

      # A route's request: [verb, path, its own parts or nil], the path
      # params first, then the parts the route's code is most likely to
      # read ({query:, cookies:, body:, headers:}), named as its code names
      # them (Route#names).
      def route_alternative(verb, route)
        keys = route.body_keys || []
        headers = Names.headers(Array(route.names)).first(Names::MAX_NAMES)
        own = keys.empty? ? own_parts_gen(verb, route_names(route), headers) : keyed_body_gen(keys)
        return Gen.constant([verb, route.template]) if route.params.empty? && own.nil?

        values = Gen.array(param_gen, max_length: route.params.size)
        Gen.map(Gen::PairGen.new(values, own || Gen.constant(nil))) do |given, parts|
          [verb, given.any?(Earlier) ? LatePath.new(route, given) : route.fill(given), parts]
        end
      end

      # The names of +route+'s pairs: those its code mentions, the app's or
      # any.
      def route_names(route)
        names = Array(route.names).uniq.first(Names::MAX_NAMES)
        names.empty? ? name_gen : Gen.one_of(Gen.from(names), name_gen)
      end

      # The JSON body of a route whose body's keys are known (OpenAPI):
      # an object with those keys, each value fuzzed.
      def keyed_body_gen(keys)
        Gen.map(Gen.array(json_value, max_length: keys.size)) do |values|
          { body: ["application/json", JSON.generate(keys.zip(values).to_h)] }
        end
      end

      # A route's own parts, early in the input where the bytes are: for a
      # method that takes a body a JSON object or a form, for others a
      # query or cookies; or the headers its code names (`X-Api-Version`,
      # `HTTP_X_API_VERSION`: only for a route that names one); or none
      # (the request's later parts only). Their params may be nested one
      # level, as Rails' strong parameters read them
      # (`{"task": {"title": ...}}`, `task[title]=...`).
      def own_parts_gen(verb, names, headers = [])
        nested = nested_name_gen(names)
        own_headers = headers_named(headers)
        if BODY_VERBS.include?(verb)
          object = Gen.hash_of(names, value_gen, max_size: PAIRS)
          json = json_object_gen(names, Gen.one_of(value_gen, object, json_value(names)))
          body = Gen.one_of(json, form_gen(nested))
          return Gen.one_of(Gen.map(body) { |content| { body: content } }, *own_headers, Gen.constant(nil))
        end

        Gen.one_of(Gen.map(pairs_gen(nested)) { |pairs| { query: pairs } },
                   Gen.map(pairs_gen(names, max_size: 2)) { |pairs| { cookies: pairs } },
                   *own_headers, Gen.constant(nil))
      end

      # The route's own headers, named +headers+: none, or a generator of
      # one or two.
      def headers_named(headers)
        return [] if headers.empty?

        [Gen.map(Gen.hash_of(Gen.from(headers), value_gen, max_size: 2)) { |pairs| { headers: pairs } }]
      end

      # The key of a query or form param: one of +names+, or one nested in
      # another as Rack reads a form ("task[title]").
      def nested_name_gen(names)
        Gen.one_of(names, Gen.map(Gen::PairGen.new(names, names)) { |outer, inner| "#{outer}[#{inner}]" })
      end

      # A path param: a small id (one byte: "0" to "255"), any number (most
      # params are ids) or a String, in a session an earlier id too.
      def param_gen
        choices = [Gen.from(SMALL_IDS), Gen.map(Gen.integer(0..999_999_999), &:to_s),
                   Gen.string(max_length: PARAM_LENGTH)]
        choices << earlier_gen if @earlier
        Gen.one_of(*choices)
      end

      # The name of a query, form or cookie pair or a JSON key: one the
      # app's code mentions, or any.
      def name_gen
        @name_gen ||= begin
          free = Gen.string(max_length: NAME_LENGTH)
          @names.empty? ? free : Gen.one_of(Gen.from(@names), free)
        end
      end

      # A reference to a value learnt earlier in the session.
      def earlier_gen = Gen.map(Gen.from((0...SessionState::KEPT).to_a)) { |index| Earlier.new(index) }

      # A value: any String, a detector's canary form, or a String that
      # ends in one ("x;ruzzy", "a/../ruzzy": what an app adds around a
      # value seldom undoes it). The detector is chosen first, so each is
      # as likely whatever its number of forms (path traversal has 3,
      # command injection 7).
      def value_gen
        free = Gen.string(max_length: VALUE_LENGTH)
        return free if @payloads.empty?

        payload = Gen.one_of(*@payloads.map { |forms| Gen.from(forms) })
        Gen.one_of(free, payload, Gen.map(Gen::PairGen.new(free, payload)) { |(text, form)| text + form })
      end

      def pairs_gen(names = name_gen, max_size: PAIRS)
        Gen.hash_of(names, value_gen, max_size:)
      end

      # Headers: names a server passes on (an HTTP token: a request with
      # another is refused before it reaches the app), known or free.
      def headers_gen
        free = Gen.map(Gen.string(max_length: NAME_LENGTH)) { |text| RequestGen.header_name(text) }
        name = Gen.one_of(Gen.from((HEADERS + Names.headers(@names)).uniq), free)
        Gen.hash_of(name, value_gen, max_size: 3)
      end

      # No body, a JSON object, a form, a multipart form or raw bytes of a
      # content type.
      def body_gen
        multipart = Gen.map(pairs_gen) { |pairs| ["multipart/form-data; boundary=#{BOUNDARY}", multipart(pairs)] }
        raw = Gen.map(Gen::PairGen.new(Gen.from(RAW_TYPES), Gen.bytes(max_length: 256)), &:itself)
        Gen.one_of(Gen.constant(nil), json_object_gen, form_gen, multipart, raw)
      end

      # A JSON object body; its values are text at least half the time (as
      # most parameters are).
      def json_object_gen(names = name_gen, values = Gen.one_of(value_gen, json_value(names)))
        Gen.map(Gen.hash_of(names, values, max_size: PAIRS)) do |object|
          ["application/json", JSON.generate(object)]
        end
      end

      def form_gen(names = name_gen)
        Gen.map(pairs_gen(names)) { |pairs| ["application/x-www-form-urlencoded", Web.form_encode(pairs)] }
      end

      # JSON values, objects and arrays three deep, the objects' keys
      # +names+.
      def json_value(names = name_gen)
        Gen.recursive(max_depth: 3) do |value|
          Gen.one_of(value_gen, Gen.integer, Gen.boolean, Gen.constant(nil),
                     Gen.array(value, max_length: PAIRS),
                     Gen.hash_of(names, value, max_size: PAIRS))
        end
      end

      def multipart(pairs)
        parts = pairs.map do |name, value|
          "--#{BOUNDARY}\r\nContent-Disposition: form-data; name=\"#{name.gsub(/["\r\n]/, "_")}\"\r\n\r\n#{value}\r\n"
        end
        "#{parts.join}--#{BOUNDARY}--\r\n"
      end
    end
  end

  module Web
    # Sessions: Arrays of at most +max+ requests of +requests+ (a
    # RequestGen whose paths may refer to earlier responses).
    class SessionGen < Gen::MapGen
      attr_reader :requests
      attr_accessor :app_expression

      def initialize(requests, max)
        @requests = requests
        super(Gen.array(requests, max_length: max), ->(list) { list })
      end

      def routes = @requests.routes

      def value_profile? = @requests.value_profile?
    end
  end

  # Gen.request, beside the other generators (gen.rb).
  module Gen
    module_function

    # Requests to a Rack app (Ruzzy::Web::Request values): to +routes+
    # ("VERB /path/:param" Strings), or by default to the routes of the
    # frameworks loaded (Rails', Sinatra's), and to any path; with
    # +openapi+ (a file), also to the operations it describes, with their
    # JSON bodies' property names. With
    # +session+ above 1, Arrays of at most that many requests, sent in
    # order by Web::RackTarget, which carries cookies, the CSRF token and
    # the ids and paths of each response to the next request. The keys of
    # queries, forms, JSON bodies and cookies are any Strings or one of
    # +names+ (by default those the code of the loaded Rails and Sinatra
    # apps mentions, Web::Names).
    def request(routes: nil, session: 1, openapi: nil, names: nil)
      unless session.is_a?(Integer) && session.between?(1, Web::RequestGen::MAX_SESSION)
        raise InvalidArgumentsError,
              "session: takes a number of requests from 1 to #{Web::RequestGen::MAX_SESSION}, got #{session.inspect}"
      end

      routes = routes.nil? ? Web::Routes.discover : Web::Routes.parse(routes)
      routes = (routes + Web::Routes.openapi(openapi)).uniq { |route| [route.verbs, route.template] } if openapi
      names = names.nil? ? Web::Names.discover : names
      unless names.is_a?(Array) && names.all?(String)
        raise InvalidArgumentsError, "names: takes an Array of Strings, got #{names.inspect}"
      end
      return Web::RequestGen.new(routes, names:) if session == 1

      Web::SessionGen.new(Web::RequestGen.new(routes, earlier: true, names:), session)
    end
  end
end

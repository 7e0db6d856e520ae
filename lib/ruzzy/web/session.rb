# frozen_string_literal: true

require "json"
require_relative "request"

module Ruzzy
  module Web
    # A value an earlier response of the same session gave (the +index+-th
    # id, or the +index+-th path), standing where a request's path param
    # or path goes: the ids a create returns feed the next request, as a
    # client of the app would use them.
    Earlier = Struct.new(:index)

    # A path that depends on earlier responses: +route+'s template filled
    # with +given+ (Strings and Earlier ids), or with no route the path an
    # earlier response linked to (+given+ holds one Earlier).
    LatePath = Struct.new(:route, :given) do
      def to_s = route ? route.template : "/(a path an earlier response gave)"
    end

    # What one session of requests (one input of `ruzzy rack --session=N`)
    # carries from each response to the next request: the cookies the app
    # set, the CSRF token its pages hold (sent as X-CSRF-Token), the ids in
    # its JSON bodies and Location headers, the paths it redirected or
    # linked to. prepare makes a decoded request the one sent; learn reads
    # a response.
    #
    # Invariant: what is learnt depends only on the responses of this
    # session, so an input replays the same way in every process.
    class SessionState
      # How many ids and paths are kept (the first ones seen).
      KEPT = 16
      # Where a page holds its CSRF token (Rails' csrf_meta_tags, forms).
      CSRF = [/<meta name="csrf-token" content="([^"]+)"/, /name="authenticity_token" value="([^"]+)"/].freeze
      # Keys of a JSON body whose values are ids.
      ID_KEY = /\A(id|.*_id|uuid|slug|token)\z/
      # Paths in a page: links and forms.
      LINK = %r{(?:href|action)="(/[^"#?]*)}

      attr_reader :cookies, :csrf_token, :ids, :paths

      def initialize
        @cookies = {}
        @csrf_token = nil
        @ids = []
        @paths = []
      end

      # The request to send for +request+: its path resolved, the cookies
      # set so far under its own, the CSRF token as a header.
      def prepare(request)
        sent = request.dup
        sent.path = resolve(request.path)
        sent.cookies = @cookies.merge(request.cookies)
        sent.headers = { "X-CSRF-Token" => @csrf_token }.merge(request.headers) if @csrf_token
        sent
      end

      # Learns what +response+ (a Response) gives the next requests.
      def learn(response)
        learn_cookies(response.headers)
        location = header(response.headers, "location")
        keep(@paths, location[%r{\A(?:https?://[^/]+)?(/[^?#]*)}, 1]) if location
        location&.scan(%r{/(\d+)(?=/|\z|\?)})&.each { |(id)| keep(@ids, id) }
        body = response.body.to_s
        @csrf_token = CSRF.lazy.filter_map { |pattern| body[pattern, 1] }.first || @csrf_token
        body.scan(LINK).each { |(path)| keep(@paths, path) }
        learn_ids(body) if body.lstrip.start_with?("{", "[")
      end

      private

      def resolve(path)
        return path unless path.is_a?(LatePath)
        return earlier(@paths, path.given.first) || "/" unless path.route

        path.route.fill(path.given.map { |value| value.is_a?(Earlier) ? earlier(@ids, value) || "1" : value })
      end

      def earlier(list, reference) = (list[reference.index % list.size] unless list.empty?)

      def keep(list, value)
        list << value if value && !value.empty? && list.size < KEPT && !list.include?(value)
      end

      # The value of the header +name+ (any case), one String.
      def header(headers, name)
        value = headers&.find { |key, _| key.to_s.casecmp?(name) }&.last
        value.is_a?(Array) ? value.join("\n") : value
      end

      # URI, required the first time a session needs it, not when ruzzy
      # loads: a library ruzzy loaded before coverage started is never
      # instrumented, and a harness may fuzz URI (test_coverage.rb).
      def uri
        require "uri"
        ::URI
      end

      def learn_cookies(headers)
        text = header(headers, "set-cookie")
        return unless text

        text.split("\n").each do |line|
          name, value = line.split(";", 2).first.to_s.split("=", 2)
          next unless name && value

          @cookies[name.strip] = uri.decode_www_form_component(value.strip)
        rescue ArgumentError
          @cookies[name.strip] = value.strip
        end
      end

      def learn_ids(body)
        walk(JSON.parse(body, max_nesting: 16))
      rescue JSON::ParserError, SystemStackError
        nil
      end

      def walk(value, key = nil)
        case value
        when Hash then value.each { |name, inner| walk(inner, name.to_s) }
        when Array then value.first(KEPT).each { |inner| walk(inner, key) }
        when Integer, String then keep(@ids, value.to_s) if key&.match?(ID_KEY)
        end
      end
    end
  end
end

# frozen_string_literal: true

# Rack middleware: a request whose header values hold control characters
# (NUL, CR, LF...; HTTP allows none but tab, RFC 9110 section 5.5) is a
# 400 before Rails reads it. Rails 6.1 and 7.2 answer the header
# "Accept: \0" with a 500: String#strip removes the NUL, String#blank? does
# not, and ActionDispatch's content negotiation calls `symbol` on nil.
class HeaderCheck
  CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/n

  def initialize(app)
    @app = app
  end

  def call(env)
    bad = env.any? { |key, value| key.start_with?("HTTP_") && value.is_a?(String) && value.b.match?(CONTROL) }
    bad ? [400, { "content-type" => "text/plain" }, ["bad header\n"]] : @app.call(env)
  end
end

# frozen_string_literal: true

# URI built from a scheme, host, port and path, then parsed back: typed, or
# with MODE=bytes the same values carved by FuzzedDataProvider
# (bench/run.rb typed_speed).
require "ruzzy"
require "uri"

SCHEMES = %w[http https ftp ldap].freeze

def check(scheme, host, port, path)
  URI.parse(URI::Generic.build(scheme:, host:, port:, path: "/#{path}").to_s).normalize.to_s
rescue URI::Error
  nil
end

if ENV["MODE"] == "bytes"
  Ruzzy.fuzz(lambda { |data|
    fdp = Ruzzy::FuzzedDataProvider.new(data)
    check(fdp.pick_value_in_list(SCHEMES), fdp.consume_random_length_string(20), fdp.consume_int_in_range(0, 65_535),
          fdp.consume_random_length_string(40))
    nil
  })
else
  G = Ruzzy::Gen
  Ruzzy.fuzz(->(scheme, host, port, path) { check(scheme, host, port, path) },
             G.from(SCHEMES), G.string(max_length: 20), G.integer(0..65_535), G.string(max_length: 40))
end

# frozen_string_literal: true

# IPAddr on an address and prefix: typed (five generated Integers) or, with
# MODE=bytes, the same values carved from the bytes by FuzzedDataProvider
# (bench/run.rb typed_speed).
require "ruzzy"
require "ipaddr"

def check(octets, prefix)
  IPAddr.new("#{octets.join(".")}/#{prefix}").to_range.first.to_s
rescue IPAddr::Error
  nil
end

if ENV["MODE"] == "bytes"
  Ruzzy.fuzz(lambda { |data|
    fdp = Ruzzy::FuzzedDataProvider.new(data)
    check(Array.new(4) { fdp.consume_int_in_range(0, 255) }, fdp.consume_int_in_range(0, 32))
    nil
  })
else
  octet = Ruzzy::Gen.integer(0..255)
  Ruzzy.fuzz(->(a, b, c, d, prefix) { check([a, b, c, d], prefix) }, octet, octet, octet, octet,
             Ruzzy::Gen.integer(0..32))
end

# frozen_string_literal: true

# An 8-byte magic integer.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  return if data.bytesize < 8

  raise "magic integer" if data.unpack1("Q<") == 0x1122334455667788
end)

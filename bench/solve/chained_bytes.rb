# frozen_string_literal: true

# Six 1-byte comparisons chained with && on one line: one branch for the
# coverage, so progress comes from comparison feedback alone.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  b = data.bytes
  raise "six bytes" if b[0] == 0x52 && b[1] == 0x55 && b[2] == 0x5a && b[3] == 0x5a && b[4] == 0x59 && b[5] == 0x21
end)

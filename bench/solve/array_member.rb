# frozen_string_literal: true

# A magic member of a 40-element Array of computed Integers (no literal
# to find in the program), read as the input's first 8 bytes.
require "ruzzy"

MEMBERS = Array.new(40) { |i| (i * 7_919) + 100_003 }.freeze

Ruzzy.fuzz(lambda { |data|
  raise "magic member" if data.bytesize >= 8 && MEMBERS.include?(data.unpack1("q<"))
})

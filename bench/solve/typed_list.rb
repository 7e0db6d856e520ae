# frozen_string_literal: true

# A typed target: the bug needs a magic first element and another magic
# element anywhere in a list of 32-bit integers.
require "ruzzy"

FIRST = 0x7EAD_BEEF
MEMBER = 31_337

Ruzzy.fuzz(lambda { |list|
  raise "magic list" if list.first == FIRST && list.include?(MEMBER)
}, Ruzzy::Gen.array(Ruzzy::Gen.integer(-(2**31)..((2**31) - 1)), max_length: 16))

# frozen_string_literal: true

# An 8-byte float constant.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  return if data.bytesize < 8

  raise "float constant" if data.unpack1("E") == 3.14159 # rubocop:disable Lint/FloatComparison
end)

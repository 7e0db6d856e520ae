# frozen_string_literal: true

# A two-stage integer check: a magic number, then a checksum of it.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  return if data.bytesize < 8

  magic, check = data.unpack("L<L<")
  return unless magic == 0xDEADBEEF

  raise "checksum" if check == (magic ^ 0x5A5A5A5A) + 12_345
end)

# frozen_string_literal: true

# A binary record: a 4-byte big-endian magic number read with unpack1,
# then a checksum byte at the end (the sum of the others, modulo 256)
# read with getbyte.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  return if data.bytesize < 6
  return unless data.unpack1("N") == 0x52555A5A

  body = data.byteslice(0, data.bytesize - 1)
  raise "record checksum" if body.sum % 256 == data.getbyte(-1)
end)

# frozen_string_literal: true

require "record_decoder/record_decoder"

# Decodes "record files": the magic "RDEC", a version byte (2), then records
# of one type byte, a 2-byte little-endian length and a payload.
#
#   M  metadata, "key=value" lines
#   S  string table, decoded by the C extension
module RecordDecoder
  MAGIC = "RDEC"
  VERSION = 2

  # Raised for malformed files (expected for bad input).
  class FormatError < StandardError; end

  module_function

  def decode(data)
    raise FormatError, "not a record file" unless data.start_with?(MAGIC)
    raise FormatError, "unsupported version" unless data.getbyte(4) == VERSION

    records = []
    pos = 5
    while pos + 3 <= data.bytesize
      type = data.byteslice(pos, 1)
      length = data.byteslice(pos + 1, 2).unpack1("v")
      payload = data.byteslice(pos + 3, length)
      records << record(type, payload)
      pos += 3 + length
    end
    records
  end

  def record(type, payload)
    case type
    when "M" then [:meta, payload.split("\n").to_h { |line| line.split("=", 2) }]
    when "S" then [:strings, Native.strings(payload)]
    else raise FormatError, "unknown record type #{type.inspect}"
    end
  rescue ArgumentError => e
    raise FormatError, e.message
  end
end

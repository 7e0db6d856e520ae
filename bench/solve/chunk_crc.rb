# frozen_string_literal: true

# Chunks laid out as PNG's: a 4-byte big-endian length, a 4-byte type,
# the content and a CRC-32 of type and content, read from an IO; the CRC
# is checked before the type is looked up, so a chunk of another type
# gets past the check only with its own CRC right, and a chunk of a new
# type adds no coverage until it does.
require "ruzzy"
require "stringio"
require "zlib"

READERS = {
  "HEAD" => ->(content) { content.unpack("nn") },
  "NOTE" => ->(content) { content.split("\0") },
  "TAIL" => ->(_content) { raise "chunk crc" }
}.freeze

def read_chunk(io)
  length, type = io.read(8)&.unpack("Na4")
  return unless length && length <= 64

  content = io.read(length)
  crc = io.read(4)&.unpack("N")&.first
  return unless content&.bytesize == length && crc == Zlib.crc32(content, Zlib.crc32(type))

  READERS.fetch(type, nil)&.call(content)
  true
end

Ruzzy.fuzz(lambda do |data|
  io = StringIO.new(data)
  nil while read_chunk(io)
end)

# frozen_string_literal: true

module Ruzzy
  module Gen
    # Reads a fuzz input front to back for the generators. Past its end
    # every byte is 0 and byte strings are shorter, so that any input, the
    # empty one included, decodes to valid values.
    class ByteReader
      def initialize(data)
        @data = data
        @pos = 0
      end

      # How many bytes it has read (past the end included).
      def position = @pos

      # The next byte (0 past the end).
      def byte
        byte = @data.getbyte(@pos) || 0
        @pos += 1
        byte
      end

      # unpack formats of the unsigned little-endian widths.
      FORMATS = { 1 => "C", 2 => "S<", 4 => "L<", 8 => "Q<" }.freeze

      # The next +width+ (1, 2, 4 or 8) bytes as an unsigned little-endian
      # integer.
      def unsigned(width)
        pos = @pos
        @pos += width
        return @data.unpack1(FORMATS[width], offset: pos) if pos + width <= @data.bytesize

        value = 0
        width.times { |shift| value |= (@data.getbyte(pos + shift) || 0) << (8 * shift) }
        value
      end

      # Up to +count+ bytes (fewer past the end), as a binary String.
      def bytes(count)
        taken = @data.byteslice(@pos, count) || "".b
        @pos += count
        taken.b
      end
    end

    # Writes the bytes a ByteReader reads back as the same values: how a
    # value tree becomes a corpus input.
    class ByteWriter
      attr_reader :data

      def initialize
        @data = +"".b
      end

      def byte(value)
        @data << (value & 0xFF)
      end

      def unsigned(value, width)
        @data << [value & ((1 << (8 * width)) - 1)].pack(ByteReader::FORMATS[width])
      end

      def bytes(text)
        @data << text.b
      end
    end
  end
end

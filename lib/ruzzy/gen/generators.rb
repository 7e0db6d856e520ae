# frozen_string_literal: true

require_relative "bytes_io"
require_relative "literal"
require_relative "../error"

module Ruzzy
  module Gen
    # The recursion budget outside any Gen.recursive.
    UNLIMITED = 1 << 30

    # A generator of values of one kind. Each works on value trees: what a
    # generator reads from the input (read), writes back as the same bytes
    # (write), turns into the value the target gets (value), writes into a
    # regression file (literal) and reads back from one (tree), and the
    # smaller trees it would try first when shrinking (shrinks). For most
    # generators the tree is the value itself.
    #
    # Invariants: read never fails and gives a tree inside the generator's
    # contract (range, length, valid encoding) for any bytes;
    # read(write(tree)) gives the same tree; shrinks only gives trees inside
    # the contract. Each also describes its byte rules for the native
    # structure-aware mutator (describe, see Schema).
    class Generator
      def value(tree) = tree
      def literal(tree) = tree
      def shrinks(_tree) = []
      # Whether it may refer to its Gen.recursive (then it is cut short at
      # the depth limit).
      def recursive? = false
      # Whether it can make a value without recursing.
      def ends? = true
      # Whether libFuzzer's value profile suits its inputs (a typed target
      # turns it on unless one of its arguments says not: TypedTarget.flags).
      def value_profile? = true

      # The tree of +literal+ (from a regression file); nil when it does not
      # fit (the caller names the file). No tree is nil.
      def tree(literal)
        literal if accepts?(literal)
      end

      def inspect = "#<#{self.class.name}>"
    end

    # Integers in a Range (by default the signed 64-bit ones), from 8 bytes
    # read little-endian: a value in range is those bytes as a two's
    # complement Integer, so a comparison libFuzzer sees can be written
    # straight into the input.
    class IntegerGen < Generator
      WIDTH = 8
      MODULUS = 1 << 64
      SIGN = 1 << 63
      INT64 = -(1 << 63)..((1 << 63) - 1)

      attr_reader :min, :max

      def initialize(range)
        range ||= INT64
        unless range.is_a?(Range) && [range.begin, range.end].all? { |bound| bound.nil? || bound.is_a?(Integer) }
          raise InvalidArgumentsError, "Gen.integer takes a Range of Integers, got #{range.inspect}"
        end

        @min = range.begin || INT64.begin
        @max = if range.end.nil?
                 INT64.end
               else
                 range.end - (range.exclude_end? ? 1 : 0)
               end
        raise InvalidArgumentsError, "Gen.integer: the range #{range.inspect} is empty" if @max < @min
        raise InvalidArgumentsError, "Gen.integer: the range #{range.inspect} is wider than 2**64" if span > MODULUS

        super()
      end

      def span = @max - @min + 1

      def read(reader, _budget)
        raw = reader.unsigned(WIDTH)
        signed = raw >= SIGN ? raw - MODULUS : raw
        signed.between?(@min, @max) ? signed : @min + (raw % span)
      end

      def write(tree, writer, _budget)
        writer.unsigned(INT64.cover?(tree) ? tree % MODULUS : tree - @min, WIDTH)
      end

      def describe(schema) = schema.node(:fixed, WIDTH)
      def accepts?(literal) = literal.is_a?(Integer) && literal.between?(@min, @max)

      def shrinks(tree)
        IntegerGen.toward(tree, 0.clamp(@min, @max))
      end

      # +goal+, then Integers ever closer to +tree+ (halving the distance):
      # a greedy shrink reaches the smallest failing value in about
      # log2(distance) squared calls.
      def self.toward(tree, goal)
        steps = []
        distance = tree - goal
        until distance.zero?
          steps << (tree - distance)
          distance = (distance.abs / 2) * (distance <=> 0)
        end
        steps
      end
    end

    # Floats, from the 8 bytes of an IEEE 754 double. Outside +range+ (or a
    # NaN or infinity not allowed) they are mapped into it.
    class FloatGen < Generator
      def initialize(range, nan:, infinite:)
        unless range.nil? || (range.is_a?(Range) && range.begin.is_a?(Numeric) && range.end.is_a?(Numeric) &&
                              range.begin <= range.end && !range.exclude_end?)
          raise InvalidArgumentsError, "Gen.float takes an inclusive Range of two numbers, got #{range.inspect}"
        end

        @range = range && (range.begin.to_f..range.end.to_f)
        @nan = nan && range.nil?
        @infinite = infinite
        super()
      end

      def read(reader, _budget)
        raw = reader.unsigned(8)
        float = [raw].pack("Q<").unpack1("E")
        return float.nan? ? 0.0 : finite(float) unless @range
        return float if @range.cover?(float)

        (@range.begin + ((raw.to_f / IntegerGen::MODULUS) * (@range.end - @range.begin))).clamp(@range.begin,
                                                                                                @range.end)
      end

      def write(tree, writer, _budget)
        writer.unsigned([tree].pack("E").unpack1("Q<"), 8)
      end

      def describe(schema) = schema.node(:fixed, 8)

      def accepts?(literal)
        return false unless literal.is_a?(Float)
        return @range.cover?(literal) if @range
        return @nan if literal.nan?

        @infinite || literal.finite?
      end

      def shrinks(tree)
        goal = @range ? 0.0.clamp(@range.begin, @range.end) : 0.0
        return [] if tree == goal || (tree.nan? && !accepts?(goal))

        [goal, tree.finite? ? tree.truncate.to_f : goal].uniq.select { |float| accepts?(float) && !float.eql?(tree) }
      end

      private

      def finite(float)
        return float if @nan && float.nan?
        return float if float.finite? || @infinite

        float.positive? ? Float::MAX : -Float::MAX
      end
    end

    # true or false, from the low bit of one byte.
    class BooleanGen < Generator
      def read(reader, _budget) = reader.byte.odd?
      def write(tree, writer, _budget) = writer.byte(tree ? 1 : 0)
      def describe(schema) = schema.node(:fixed, 1)
      def accepts?(literal) = [true, false].include?(literal)
      def shrinks(tree) = tree ? [false] : []
    end

    # Binary Strings of at most +max_length+ bytes: a little-endian length
    # (1, 2 or 4 bytes, taken modulo max_length + 1), then the bytes.
    class BytesGen < Generator
      attr_reader :max_length

      def initialize(max_length, name = "Gen.bytes")
        unless max_length.is_a?(Integer) && max_length.between?(0, (1 << 31) - 1)
          raise InvalidArgumentsError, "#{name}: max_length must be an Integer from 0 to 2**31 - 1, got " \
                                       "#{max_length.inspect}"
        end

        @max_length = max_length
        @width = [1, 2, 4].find { |width| max_length < (1 << (8 * width)) }
        super()
      end

      def read(reader, _budget)
        reader.bytes(reader.unsigned(@width) % (@max_length + 1))
      end

      def write(tree, writer, _budget)
        writer.unsigned(tree.bytesize, @width)
        writer.bytes(tree)
      end

      def describe(schema) = schema.node(:bytes, @width, @max_length)
      def value(tree) = tree.dup
      def accepts?(literal) = literal.is_a?(String) && literal.bytesize <= @max_length
      def tree(literal) = (literal.b if accepts?(literal))
      def shrinks(tree) = BytesGen.shorter(tree)

      # Shorter versions of +text+, shortest first.
      def self.shorter(text)
        return [] if text.empty?

        half = text[0, text.length / 2]
        [text[0, 0], half, text[0...-1], text[1..]].uniq - [text]
      end
    end

    # Strings of at most +max_length+ characters, always valid in
    # +encoding+: the bytes of a BytesGen (4 per character), with invalid
    # sequences replaced and cut to max_length characters.
    class StringGen < Generator
      def initialize(max_length, encoding)
        encoding = Encoding.find(encoding.to_s) unless encoding.is_a?(Encoding)
        if encoding.dummy?
          raise InvalidArgumentsError, "Gen.string: #{encoding} is a dummy encoding; name one with a byte order"
        end

        @bytes = BytesGen.new(max_length.is_a?(Integer) ? max_length * 4 : max_length, "Gen.string")
        @max_length = max_length
        @encoding = encoding
        @replacement = (encoding.name.start_with?("UTF") ? "\uFFFD" : "?").encode(encoding)
        super()
      rescue ArgumentError => e
        raise InvalidArgumentsError, "Gen.string: #{e.message}"
      end

      def read(reader, budget)
        text = @bytes.read(reader, budget).force_encoding(@encoding).scrub(@replacement)
        text.length > @max_length ? text[0, @max_length] : text
      end

      def write(tree, writer, budget) = @bytes.write(tree, writer, budget)
      def describe(schema) = @bytes.describe(schema)
      def value(tree) = tree.dup

      def tree(literal)
        return unless literal.is_a?(String)

        text = literal.b.force_encoding(@encoding)
        text if text.valid_encoding? && text.length <= @max_length
      end

      def accepts?(literal) = !tree(literal).nil?
      def shrinks(tree) = BytesGen.shorter(tree)
    end

    # Symbols: the Strings of a StringGen (UTF-8).
    class SymbolGen < Generator
      def initialize(max_length)
        @string = StringGen.new(max_length, Encoding::UTF_8)
        super()
      end

      def read(reader, budget) = @string.read(reader, budget).to_sym
      def write(tree, writer, budget) = @string.write(tree.to_s, writer, budget)
      def describe(schema) = @string.describe(schema)
      def accepts?(literal) = literal.is_a?(Symbol) && @string.accepts?(literal.to_s)
      def shrinks(tree) = @string.shrinks(tree.to_s).map(&:to_sym)
    end

    # Always +value+; reads nothing. Its tree is 0.
    class ConstantGen < Generator
      def initialize(value)
        @value = value
        @literal = Literal.literal?(value) ? value : nil
        super()
      end

      def read(_reader, _budget) = 0
      def write(_tree, _writer, _budget) = nil
      def describe(schema) = schema.node(:fixed, 0)
      def value(_tree) = @value
      def literal(_tree) = @literal
      # (Float::NAN is not eql? to itself, but is the same object.)
      def accepts?(literal) = literal.eql?(@literal) || literal.equal?(@literal)
      def tree(literal) = (0 if accepts?(literal))
    end

    # One of several generators, chosen by one byte. Its tree is [index,
    # tree]. Read back from a file, a literal belongs to the first
    # generator that takes it.
    class OneOfGen < Generator
      def initialize(gens, name = "Gen.one_of")
        raise InvalidArgumentsError, "#{name} needs at least one generator" if gens.empty?

        gens.each { |gen| Gen.check!(gen, name) }
        raise InvalidArgumentsError, "#{name} takes at most 256 generators, got #{gens.size}" if gens.size > 256

        @gens = gens
        @ending = gens.each_index.reject { |index| gens[index].recursive? }
        super()
      end

      def read(reader, budget)
        choices = budget.positive? || @ending.empty? ? @gens.each_index.to_a : @ending
        index = choices[reader.byte % choices.size]
        [index, @gens[index].read(reader, budget)]
      end

      def write(tree, writer, budget)
        index, inner = tree
        choices = budget.positive? || @ending.empty? ? @gens.each_index.to_a : @ending
        writer.byte(choices.index(index) || 0)
        @gens[index].write(inner, writer, budget)
      end

      def describe(schema)
        schema.node(:choice, *@gens.flat_map { |gen| [schema.id(gen), gen.recursive? ? 0 : 1] })
      end

      def value(tree) = @gens[tree[0]].value(tree[1])
      def literal(tree) = @gens[tree[0]].literal(tree[1])
      def recursive? = @gens.any?(&:recursive?)
      def ends? = @gens.any?(&:ends?)

      def tree(literal)
        @gens.each_with_index do |gen, index|
          inner = gen.tree(literal)
          return [index, inner] unless inner.nil?
        end
        nil
      end

      def accepts?(literal) = !tree(literal).nil?

      def shrinks(tree)
        index, inner = tree
        earlier = (0...index).filter_map { |other| [other, @gens[other].read(ByteReader.new(""), UNLIMITED)] }
        earlier.first(1) + @gens[index].shrinks(inner).map { |smaller| [index, smaller] }
      end
    end

    # Arrays of at most +max_length+ elements of one generator: a length
    # byte (modulo max_length + 1), then the elements.
    class ArrayGen < Generator
      def initialize(element, max_length, name = "Gen.array")
        Gen.check!(element, name)
        unless max_length.is_a?(Integer) && max_length.between?(0, 255)
          raise InvalidArgumentsError, "#{name}: max_length must be an Integer from 0 to 255, got #{max_length.inspect}"
        end

        @element = element
        @max_length = max_length
        super()
      end

      def read(reader, budget)
        count = reader.byte % (@max_length + 1)
        count = 0 if @element.recursive? && !budget.positive?
        Array.new(count) { @element.read(reader, budget) }
      end

      def write(tree, writer, budget)
        writer.byte(tree.size)
        tree.each { |item| @element.write(item, writer, budget) }
      end

      def describe(schema)
        schema.node(:array, @max_length, schema.id(@element), @element.recursive? ? 1 : 0)
      end

      def value(tree) = tree.map { |item| @element.value(item) }
      def literal(tree) = tree.map { |item| @element.literal(item) }
      def recursive? = @element.recursive?

      def tree(literal)
        return unless literal.is_a?(Array) && literal.size <= @max_length

        trees = literal.map { |item| @element.tree(item) }
        trees unless trees.include?(nil)
      end

      def accepts?(literal) = !tree(literal).nil?

      def shrinks(tree)
        return [] if tree.empty?

        fewer = [[], tree[0, tree.size / 2]] + tree.each_index.first(8).map do |index|
                                                 tree[0...index] + tree[(index + 1)..]
                                               end
        smaller = tree.each_with_index.first(8).flat_map do |item, index|
          @element.shrinks(item).map { |inner| tree.dup.tap { |copy| copy[index] = inner } }
        end
        (fewer.uniq - [tree]) + smaller
      end
    end
  end
end

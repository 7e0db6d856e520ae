# frozen_string_literal: true

# This file and every file of lib/ruzzy/gen/ stand on one floor (docs/architecture.md):
# May use: default_args, error, findings, libfuzzer_args, native.

require_relative "error"
require_relative "gen/generators"
require_relative "gen/composites"
require_relative "gen/arguments"

module Ruzzy
  # Generators for typed fuzz targets (docs/typed-fuzz-tests.md):
  #
  #   Ruzzy.fuzz(->(port, path, verbose) { ... },
  #              Ruzzy::Gen.integer(0..65_535), Ruzzy::Gen.string(max_length: 64), Ruzzy::Gen.boolean)
  #
  # Each fuzz input (bytes) is decoded front to back into one value per
  # generator; every input decodes, and every value is inside its
  # generator's contract. Integers and strings are taken from the input's
  # bytes as they are, so a comparison the target makes can be written
  # straight back into the input by libFuzzer.
  module Gen
    DEFAULT_STRING_LENGTH = 64
    DEFAULT_BYTES_LENGTH = 256
    DEFAULT_ARRAY_LENGTH = 16

    module_function

    # Integers in +range+ (by default any signed 64-bit Integer).
    def integer(range = nil) = IntegerGen.new(range)

    # Floats in +range+ (inclusive; by default any, with NaN and the
    # infinities unless nan: false or infinite: false).
    def float(range = nil, nan: true, infinite: true) = FloatGen.new(range, nan:, infinite:)

    def boolean = BooleanGen.new

    # Binary Strings of at most +max_length+ bytes.
    def bytes(max_length: DEFAULT_BYTES_LENGTH) = BytesGen.new(max_length)

    # Strings of at most +max_length+ characters, valid in +encoding+.
    def string(max_length: DEFAULT_STRING_LENGTH, encoding: Encoding::UTF_8) = StringGen.new(max_length, encoding)

    # Symbols of at most +max_length+ characters.
    def symbol(max_length: DEFAULT_STRING_LENGTH) = SymbolGen.new(max_length)

    # Always +value+.
    def constant(value) = ConstantGen.new(value)

    # A value of one of +gens+.
    def one_of(*gens) = OneOfGen.new(gens)

    # nil or a value of +gen+.
    def optional(gen) = OneOfGen.new([ConstantGen.new(nil), gen], "Gen.optional")

    # Arrays of at most +max_length+ (up to 255) values of +gen+.
    def array(gen, max_length: DEFAULT_ARRAY_LENGTH) = ArrayGen.new(gen, max_length)

    # Hashes of at most +max_size+ (up to 255) pairs.
    def hash_of(key_gen, value_gen, max_size: DEFAULT_ARRAY_LENGTH) = HashGen.new(key_gen, value_gen, max_size)

    # Instances of the Struct or Data class +klass+, each field from its
    # generator: struct(Point, x: Gen.integer, y: Gen.integer).
    def struct(klass, **fields) = StructGen.new(klass, fields)

    # One of +values+ (at most 65536).
    def from(values) = FromGen.new(values)

    # A generator that refers to itself (trees), at most +max_depth+ deep:
    #
    #   json = Gen.recursive(max_depth: 4) do |value|
    #     Gen.one_of(Gen.integer, Gen.string, Gen.array(value), Gen.hash_of(Gen.string, value))
    #   end
    def recursive(max_depth: 4, &block) = RecursiveGen.new(max_depth, &block)

    # Values of +gen+ passed through the block: map(Gen.string) { |s| URI(s) }.
    def map(gen, &block) = MapGen.new(gen, block)

    # Raises unless +gen+ is a generator (+where+ names the caller).
    def check!(gen, where)
      return if gen.is_a?(Generator)

      raise InvalidArgumentsError, "#{where} takes Ruzzy::Gen generators, got #{gen.inspect}"
    end
  end
end

# frozen_string_literal: true

require "ruzzy/gen"

# Generators of every kind with the contract each promises (a check of the
# values it gives), for the tests of the generators and of the native
# structure-aware mutator.
module GenContracts
  G = Ruzzy::Gen
  Point = Struct.new(:x, :y)
  Pair = Struct.new(:left, :right, keyword_init: true)

  JSON_LIKE = G.recursive(max_depth: 3) do |value|
    G.one_of(G.constant(nil), G.boolean, G.integer(-5..5), G.float(-1.0..1.0), G.string(max_length: 4),
             G.array(value, max_length: 3), G.hash_of(G.string(max_length: 3), value, max_size: 2))
  end

  # [generator, contract check] pairs.
  CONTRACTS = {
    G.integer(0..65_535) => ->(v) { v.is_a?(Integer) && v.between?(0, 65_535) },
    G.integer(-10...10) => ->(v) { v.is_a?(Integer) && v.between?(-10, 9) },
    G.integer((2**63)..((2**64) - 1)) => ->(v) { v.is_a?(Integer) && v.between?(2**63, (2**64) - 1) },
    G.integer => ->(v) { v.is_a?(Integer) && v.bit_length < 64 },
    G.float => ->(v) { v.is_a?(Float) },
    G.float(nan: false, infinite: false) => ->(v) { v.is_a?(Float) && v.finite? },
    G.float(-2.5..1e10) => ->(v) { v.is_a?(Float) && v.between?(-2.5, 1e10) },
    G.boolean => ->(v) { [true, false].include?(v) },
    G.bytes(max_length: 300) => ->(v) { v.encoding == Encoding::BINARY && v.bytesize <= 300 },
    G.string(max_length: 5) => ->(v) { v.encoding == Encoding::UTF_8 && v.valid_encoding? && v.length <= 5 },
    G.string(max_length: 7, encoding: Encoding::UTF_16LE) => lambda { |v|
      v.encoding == Encoding::UTF_16LE && v.valid_encoding? && v.length <= 7
    },
    G.string(encoding: Encoding::US_ASCII) => ->(v) { v.ascii_only? && v.valid_encoding? && v.length <= 64 },
    G.symbol(max_length: 3) => ->(v) { v.is_a?(Symbol) && v.length <= 3 },
    G.constant(:fixed) => ->(v) { v == :fixed },
    G.optional(G.integer(1..2)) => ->(v) { [nil, 1, 2].include?(v) },
    G.array(G.boolean, max_length: 4) => ->(v) { v.size <= 4 && v.all? { |item| [true, false].include?(item) } },
    G.hash_of(G.symbol(max_length: 2), G.integer(0..1), max_size: 3) => lambda { |v|
      v.size <= 3 && v.all? { |key, item| key.is_a?(Symbol) && [0, 1].include?(item) }
    },
    G.struct(Point, x: G.integer(1..3), y: G.boolean) => ->(v) { v.is_a?(Point) && v.x.between?(1, 3) },
    G.struct(Pair, left: G.integer(0..1)) => ->(v) { v.is_a?(Pair) && [0, 1].include?(v.left) && v.right.nil? },
    G.from(%w[a b c]) => ->(v) { %w[a b c].include?(v) },
    G.map(G.integer(0..9)) { |n| n * 100 } => ->(v) { (v % 100).zero? && v.between?(0, 900) },
    JSON_LIKE => ->(v) { GenContracts.depth(v) <= 3 }
  }.freeze

  def self.depth(value)
    case value
    when Array then 1 + (value.map { |item| depth(item) }.max || 0)
    when Hash then 1 + (value.values.map { |item| depth(item) }.max || 0)
    else 0
    end
  end
end

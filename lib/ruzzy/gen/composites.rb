# frozen_string_literal: true

require_relative "generators"

module Ruzzy
  module Gen
    # Hashes of at most +max_size+ pairs: an ArrayGen of [key, value] pairs
    # (a repeated key keeps its last value).
    class HashGen < Generator
      def initialize(key, value, max_size)
        @key = key
        @value = value
        @pairs = ArrayGen.new(PairGen.new(key, value), max_size, "Gen.hash_of")
        super()
      end

      def read(reader, budget) = @pairs.read(reader, budget)
      def write(tree, writer, budget) = @pairs.write(tree, writer, budget)
      def describe(schema) = @pairs.describe(schema)
      def value(tree) = tree.to_h { |key, value| [@key.value(key), @value.value(value)] }
      def literal(tree) = tree.to_h { |key, value| [@key.literal(key), @value.literal(value)] }
      def recursive? = @pairs.recursive?
      def tree(literal) = (@pairs.tree(literal.to_a) if literal.is_a?(Hash))
      def accepts?(literal) = !tree(literal).nil?
      def shrinks(tree) = @pairs.shrinks(tree)
    end

    # A key and a value (HashGen's elements).
    class PairGen < Generator
      def initialize(key, value)
        Gen.check!(key, "Gen.hash_of")
        Gen.check!(value, "Gen.hash_of")
        @gens = [key, value]
        super()
      end

      def read(reader, budget) = @gens.map { |gen| gen.read(reader, budget) }
      def write(tree, writer, budget) = @gens.each_with_index { |gen, index| gen.write(tree[index], writer, budget) }
      def describe(schema) = schema.node(:sequence, *@gens.map { |gen| schema.id(gen) })
      def value(tree) = @gens.each_with_index.map { |gen, index| gen.value(tree[index]) }
      def literal(tree) = @gens.each_with_index.map { |gen, index| gen.literal(tree[index]) }
      def recursive? = @gens.any?(&:recursive?)
      def ends? = @gens.all?(&:ends?)

      def tree(literal)
        return unless literal.is_a?(Array) && literal.size == 2

        trees = @gens.zip(literal).map { |gen, item| gen.tree(item) }
        trees unless trees.include?(nil)
      end

      def accepts?(literal) = !tree(literal).nil?

      def shrinks(tree)
        @gens.each_with_index.flat_map do |gen, index|
          gen.shrinks(tree[index]).map { |inner| tree.dup.tap { |copy| copy[index] = inner } }
        end
      end
    end

    # Instances of a Struct or Data class, each named field from its own
    # generator (in the order given); written in regression files as
    # ClassName.new(field: literal, ...).
    class StructGen < Generator
      def initialize(klass, fields)
        unless klass.is_a?(Class) && (klass < ::Struct || (defined?(::Data) && klass < ::Data)) && klass.name
          raise InvalidArgumentsError, "Gen.struct takes a named Struct or Data class, got #{klass.inspect}"
        end

        unknown = fields.keys - klass.members
        raise InvalidArgumentsError, "Gen.struct: #{klass} has no field #{unknown.first}" if unknown.any?

        missing = klass.members - fields.keys
        if defined?(::Data) && klass < ::Data && missing.any?
          raise InvalidArgumentsError, "Gen.struct: #{klass} needs a generator for #{missing.join(", ")}"
        end

        fields.each_value { |gen| Gen.check!(gen, "Gen.struct") }
        @klass = klass
        @fields = fields
        super()
      end

      def read(reader, budget) = @fields.map { |_name, gen| gen.read(reader, budget) }

      def write(tree, writer, budget)
        @fields.each_value.with_index do |gen, index|
          gen.write(tree[index], writer, budget)
        end
      end

      def describe(schema) = schema.node(:sequence, *@fields.each_value.map { |gen| schema.id(gen) })

      # A Struct by position (members without a generator are nil), so that
      # one without keyword_init works on every Ruby; a Data or keyword_init
      # Struct by keywords.
      def value(tree)
        given = @fields.each_with_index.to_h { |(name, gen), index| [name, gen.value(tree[index])] }
        return @klass.new(**given) unless @klass < ::Struct && !@klass.keyword_init?

        @klass.new(*@klass.members.map { |name| given[name] })
      end

      def recursive? = @fields.each_value.any?(&:recursive?)
      def ends? = @fields.each_value.all?(&:ends?)

      def literal(tree)
        Literal::StructLiteral.new(@klass.name,
                                   @fields.each_with_index.to_h do |(name, gen), index|
                                     [name, gen.literal(tree[index])]
                                   end)
      end

      def tree(literal)
        return unless literal.is_a?(Literal::StructLiteral) && literal.name == @klass.name &&
                      literal.fields.keys.sort == @fields.keys.sort

        trees = @fields.map { |name, gen| gen.tree(literal.fields[name]) }
        trees unless trees.include?(nil)
      end

      def accepts?(literal) = !tree(literal).nil?

      def shrinks(tree)
        @fields.each_value.with_index.flat_map do |gen, index|
          gen.shrinks(tree[index]).map { |inner| tree.dup.tap { |copy| copy[index] = inner } }
        end
      end
    end

    # One of a pool of +values+, by index (one or two bytes).
    class FromGen < Generator
      def initialize(values)
        values = values.to_a if values.respond_to?(:to_a) && !values.is_a?(Array)
        unless values.is_a?(Array) && !values.empty? && values.size <= 65_536
          raise InvalidArgumentsError, "Gen.from takes a non-empty list of at most 65536 values, got #{values.inspect}"
        end

        @values = values.dup.freeze
        @width = values.size <= 256 ? 1 : 2
        super()
      end

      def read(reader, _budget) = reader.unsigned(@width) % @values.size
      def write(tree, writer, _budget) = writer.unsigned(tree, @width)
      def describe(schema) = schema.node(:fixed, @width, *schema.pool(@values))
      def value(tree) = @values[tree]
      def literal(tree) = Literal.literal?(@values[tree]) ? @values[tree] : tree
      def tree(literal) = @values.index { |value| value.eql?(literal) } || (literal if index?(literal))
      def accepts?(literal) = !tree(literal).nil?
      def shrinks(tree) = tree.zero? ? [] : [0]

      private

      # A pool value that has no literal is written as its index.
      def index?(literal)
        literal.is_a?(Integer) && literal.between?(0, @values.size - 1) && !Literal.literal?(@values[literal])
      end
    end

    # Values of +gen+ passed through a block (user types). Regression files
    # hold the value before the block.
    class MapGen < Generator
      def initialize(gen, block)
        Gen.check!(gen, "Gen.map")
        raise InvalidArgumentsError, "Gen.map needs a block turning a value into another" unless block

        @gen = gen
        @block = block
        super()
      end

      def read(reader, budget) = @gen.read(reader, budget)
      def write(tree, writer, budget) = @gen.write(tree, writer, budget)
      def describe(schema) = @gen.describe(schema)
      def value(tree) = @block.call(@gen.value(tree))
      def literal(tree) = @gen.literal(tree)
      def tree(literal) = @gen.tree(literal)
      def accepts?(literal) = @gen.accepts?(literal)
      def shrinks(tree) = @gen.shrinks(tree)
      def recursive? = @gen.recursive?
      def ends? = @gen.ends?
    end

    # Trees of values (JSON-like documents): the generator the block builds
    # from a reference to itself, nested at most +max_depth+ times; at the
    # limit one_of picks only alternatives that do not recurse, and arrays
    # and hashes of recursive elements are empty.
    class RecursiveGen < Generator
      # The block's reference to the generator being defined.
      class Ref < Generator
        def initialize(owner)
          @owner = owner
          super()
        end

        def read(reader, budget) = @owner.inner.read(reader, budget - 1)
        def write(tree, writer, budget) = @owner.inner.write(tree, writer, budget - 1)
        def describe(schema) = schema.node(:ref, schema.id(@owner))
        def value(tree) = @owner.inner.value(tree)
        def literal(tree) = @owner.inner.literal(tree)
        def tree(literal) = @owner.inner.tree(literal)
        def accepts?(literal) = @owner.inner.accepts?(literal)
        def shrinks(tree) = @owner.inner.shrinks(tree)
        def recursive? = true
        def ends? = false
      end

      attr_reader :inner

      def initialize(max_depth, &block)
        unless max_depth.is_a?(Integer) && max_depth.between?(1, 64)
          raise InvalidArgumentsError,
                "Gen.recursive: max_depth must be an Integer from 1 to 64, got #{max_depth.inspect}"
        end
        raise InvalidArgumentsError, "Gen.recursive needs a block building a generator from itself" unless block

        @max_depth = max_depth
        @inner = block.call(Ref.new(self))
        Gen.check!(@inner, "Gen.recursive's block")
        unless @inner.ends?
          raise InvalidArgumentsError, "Gen.recursive: the generator never ends (give one_of an alternative that " \
                                       "does not recurse)"
        end

        super()
      end

      def describe(schema) = schema.node(:recursive, @max_depth, schema.id(@inner))
      def read(reader, _budget) = @inner.read(reader, @max_depth)
      def write(tree, writer, _budget) = @inner.write(tree, writer, @max_depth)
      def value(tree) = @inner.value(tree)
      def literal(tree) = @inner.literal(tree)
      def tree(literal) = @inner.tree(literal)
      def accepts?(literal) = @inner.accepts?(literal)
      def shrinks(tree) = @inner.shrinks(tree)
    end
  end
end

# frozen_string_literal: true

require_relative "../native"

module Ruzzy
  module Gen
    # The generators of a typed target described for ruzzy's native
    # structure-aware mutator (ext/ruzzy/src/input/structured/): one node
    # per generator, each an Array of Integers (its kind's tag, then its
    # fields), generators shared or recursive described once.
    #
    # Each generator describes itself (Generator#describe) with the same
    # byte rules its read follows; test/unit/test_structured_mutation.rb
    # checks that the native reading agrees with read on every generator.
    class Schema
      # The nodes, then one root id per argument: what Ruzzy::Native._fuzz
      # takes.
      def self.of(gens)
        schema = new
        roots = gens.map { |gen| schema.id(gen) }
        [schema.nodes, roots]
      end

      attr_reader :nodes

      def initialize
        @nodes = []
        @ids = {}.compare_by_identity
      end

      # The id of +gen+'s node. The id is taken before the generator
      # describes itself, so that a Gen.recursive's reference to itself
      # finds it.
      def id(gen)
        @ids.fetch(gen) do
          @ids[gen] = id = @nodes.size
          @nodes << nil
          @nodes[id] = gen.describe(self)
          id
        end
      end

      # A node of +kind+ (one of Ruzzy::Native::SCHEMA_NODE_KINDS) with
      # +fields+.
      def node(kind, *fields)
        tag = Ruzzy::Native::SCHEMA_NODE_KINDS.index(kind) or raise ArgumentError, "unknown schema node kind #{kind}"
        [tag, *fields]
      end
    end
  end
end

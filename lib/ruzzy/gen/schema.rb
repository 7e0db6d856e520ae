# frozen_string_literal: true

require_relative "../native"

module Ruzzy
  module Gen
    # The generators of a typed target described for ruzzy's native
    # structure-aware mutator (ext/ruzzy/src/input/structured/): one node
    # per generator, each an Array of Integers (its kind's tag, then its
    # fields), generators shared or recursive described once; and the
    # pools of Strings (Gen.from) whose choices the mutator may set to a
    # value the target wanted (a Hash key it missed, a detector's canary).
    #
    # Each generator describes itself (Generator#describe) with the same
    # byte rules its read follows; test/unit/test_structured_mutation.rb
    # checks that the native reading agrees with read on every generator.
    class Schema
      # The nodes, one root id per argument, then the pools: what
      # Ruzzy::Native._fuzz takes.
      def self.of(gens)
        schema = new
        roots = gens.map { |gen| schema.id(gen) }
        [schema.nodes, roots, schema.pools]
      end

      attr_reader :nodes, :pools

      def initialize
        @nodes = []
        @ids = {}.compare_by_identity
        @pools = []
      end

      # The fields naming the pool of +values+ (a Gen.from's) after its
      # width: the pool's id when it holds Strings or Symbols (each as its
      # bytes; any other value as ""), else none.
      def pool(values)
        return [] unless values.any? { |value| value.is_a?(String) || value.is_a?(Symbol) }

        @pools << values.map { |value| value.is_a?(String) || value.is_a?(Symbol) ? value.to_s.b : "".b }
        [@pools.size - 1]
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

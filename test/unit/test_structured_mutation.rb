# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/gen_contracts"
require "ruzzy"

# The structure-aware mutator of typed targets
# (ext/ruzzy/src/input/structured/): it reads inputs exactly as the
# generators do, a leaf mutation changes one value and leaves every other
# alone, collections grow and shrink by one element, choices switch, and
# every result decodes inside the generators' contract.
class TestStructuredMutation < Minitest::Test
  G = Ruzzy::Gen
  ALL = G::Arguments.new(GenContracts::CONTRACTS.keys, "test")

  def inputs(count, seed: 1, longest: 120)
    random = Random.new(seed)
    [""] + Array.new(count) { random.bytes(random.rand(0..longest)) } + ["\xFF".b * 400]
  end

  # The byte where each argument ends, as the generators read it.
  def argument_ends(arguments, data)
    reader = G::ByteReader.new(data)
    arguments.gens.map do |gen|
      gen.read(reader, G::UNLIMITED)
      reader.position
    end
  end

  # The same, as the native layout reads it (its top-level spans).
  def native_argument_ends(arguments, data)
    spans = Ruzzy::Native._probe_structure_layout(arguments.schema, data)
    index = 0
    arguments.gens.map do
      _node, _start, finish, following = spans.fetch(index)
      index = following
      finish
    end
  end

  # Every leaf value of the trees, in order (as inspected, so that NaN
  # equals NaN).
  def leaves(arguments, data) = arguments.decode(data).flatten.map(&:inspect)

  def mutate(arguments, data, kind, max_size: 4096)
    Ruzzy::Native._probe_structure_mutate(arguments.schema, data, max_size, kind)
  end

  def assert_in_contract(data)
    GenContracts::CONTRACTS.values.zip(ALL.values(ALL.decode(data))).each_with_index do |(check, value), index|
      assert check.call(value), "argument #{index + 1} out of contract: #{value.inspect} from #{data.inspect}"
    end
  end

  def test_native_reading_agrees_with_the_generators
    inputs(2_000).each do |data|
      assert_equal argument_ends(ALL, data), native_argument_ends(ALL, data), data.inspect
    end
  end

  def test_a_leaf_mutation_changes_one_value_and_leaves_the_rest
    changed = 0
    tried = inputs(2_000, seed: 2)
    tried.each do |data|
      made, mutated = mutate(ALL, data, :leaf)
      assert_equal :leaf, made
      assert_in_contract(mutated)
      before = leaves(ALL, data)
      after = leaves(ALL, mutated)
      assert_equal before.size, after.size, "#{data.inspect} -> #{mutated.inspect}"
      differences = before.zip(after).count { |old, new| old != new }
      assert_operator differences, :<=, 1, "#{data.inspect} -> #{mutated.inspect}"
      changed += differences
    end
    # Some leaves cannot show a flipped bit (a boolean's other bits, an
    # invalid byte scrubbed either way, a one-value range); most do.
    assert_operator changed, :>, tried.size * 0.7
  end

  def test_arrays_grow_and_shrink_by_one_element_and_nothing_else_moves
    arguments = G::Arguments.new([G.integer, G.array(G.integer(0..9), max_length: 5), G.string(max_length: 4)], "test")
    sizes = Hash.new(0)
    inputs(1_000, seed: 3, longest: 60).each do |data|
      made, mutated = mutate(arguments, data, :array)
      assert_equal :array, made
      before = arguments.values(arguments.decode(data))
      after = arguments.values(arguments.decode(mutated))
      assert_equal [before[0], before[2]], [after[0], after[2]], "#{data.inspect} -> #{mutated.inspect}"
      assert_operator after[1].size, :<=, 5
      sizes[after[1].size - before[1].size] += 1
    end
    assert_equal [-1, 0, 1], sizes.keys.sort
    assert sizes.values.all? { |count| count > 100 }, sizes.inspect
  end

  def test_a_choice_switches_to_another_alternative
    arguments = G::Arguments.new([G.integer, G.one_of(G.boolean, G.string(max_length: 3), G.constant(nil)),
                                  G.integer], "test")
    inputs(500, seed: 4, longest: 40).each do |data|
      made, mutated = mutate(arguments, data, :choice)
      assert_equal :choice, made
      before = arguments.decode(data)
      after = arguments.decode(mutated)
      assert_equal [before[0], before[2]], [after[0], after[2]], "#{data.inspect} -> #{mutated.inspect}"
      refute_equal before[1][0], after[1][0]
    end
  end

  def test_a_value_is_replaced_by_another_of_the_same_generator
    arguments = G::Arguments.new([G.array(G.string(max_length: 4), max_length: 4)], "test")
    copies = 0
    inputs(500, seed: 5, longest: 40).each do |data|
      made, mutated = mutate(arguments, data, :copy)
      before = arguments.values(arguments.decode(data)).first
      # Fewer than two strings: nothing to copy; a leaf if there is one.
      next assert_nil(made) if before.empty?
      next assert_equal(:leaf, made) if before.size == 1

      after = arguments.values(arguments.decode(mutated)).first
      assert_equal :copy, made
      assert_equal before.size, after.size
      assert_empty after - before, "#{before.inspect} -> #{after.inspect}"
      copies += 1
    end
    assert_operator copies, :>, 100
  end

  # What the target wanted (a Hash key it missed, a detector's canary),
  # when a pool holds it, is set into a choice of that pool; every other
  # value stays.
  def test_a_pool_choice_becomes_a_word_the_target_wanted
    arguments = G::Arguments.new([G.integer, G.hash_of(G.from(%w[title email status]), G.from(%i[a b]),
                                                       max_size: 3)], "test")
    set = 0
    inputs(300, seed: 7, longest: 30).each do |data|
      number, hash = arguments.values(arguments.decode(data))
      mutated = Ruzzy::Native._probe_structure_wanted(arguments.schema, data, "status")
      next assert_nil(mutated, "no key to set") if hash.empty?

      new_number, new_hash = arguments.values(arguments.decode(mutated))
      assert_equal number, new_number
      assert_includes new_hash.keys, "status", "#{hash.inspect} -> #{new_hash.inspect}"
      assert_operator new_hash.size, :>=, hash.size - 1
      set += 1
    end
    assert_operator set, :>, 100
    assert_nil Ruzzy::Native._probe_structure_wanted(arguments.schema, "#{"\0" * 8}\x01\0\0", "unknown")
    symbol = Ruzzy::Native._probe_structure_wanted(arguments.schema, "#{"\0" * 8}\x01\0\0", "b")
    assert_equal [0, { "title" => :b }], arguments.values(arguments.decode(symbol)), "a Symbol by its name"
  end

  # A one_of whose alternative (or its alternative's alternative) is such
  # a pool switches to it.
  def test_a_one_of_switches_to_the_pool_that_holds_the_wanted_word
    forms = G.one_of(G.from([";ruzzy", "|ruzzy"]), G.from(["../ruzzy"]))
    arguments = G::Arguments.new([G.array(G.one_of(G.string(max_length: 8), forms), max_length: 3)], "test")
    inputs(200, seed: 8, longest: 30).each do |data|
      values = arguments.values(arguments.decode(data)).first
      mutated = Ruzzy::Native._probe_structure_wanted(arguments.schema, data, "|ruzzy")
      next assert_nil(mutated) if values.empty?

      after = arguments.values(arguments.decode(mutated)).first
      assert_equal values.size, after.size
      assert_includes after, "|ruzzy", "#{values.inspect} -> #{after.inspect}"
      assert_operator values.zip(after).count { |old, new| old != new }, :<=, 1, "one value changed"
    end
  end

  def test_every_mutation_decodes_inside_the_contract_and_fits_max_size
    inputs(500, seed: 6).each do |data|
      %i[leaf array choice copy].each do |kind|
        max_size = [data.bytesize, 1].max
        _made, mutated = mutate(ALL, data, kind, max_size:)
        assert_operator mutated.bytesize, :<=, max_size
        assert_in_contract(mutated)
      end
    end
  end
end

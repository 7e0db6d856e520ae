# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/gen"
require_relative "../support/gen_contracts"

# The generators of typed fuzz targets (Ruzzy::Gen, docs/typed-fuzz-tests.md):
# every input decodes to values inside their contract, values round-trip
# through bytes and regression files, files are parsed and never
# evaluated, and shrinking makes findings small.
class TestGen < Minitest::Test
  G = Ruzzy::Gen
  Point = GenContracts::Point

  CONTRACTS = GenContracts::CONTRACTS

  def test_every_input_decodes_inside_the_contract_and_round_trips
    arguments = G::Arguments.new(CONTRACTS.keys, "test")
    random = Random.new(1)
    inputs = [""] + Array.new(3_000) { random.bytes(random.rand(0..120)) } + ["\xFF".b * 400]
    inputs.each do |data|
      trees = arguments.decode(data)
      values = arguments.values(trees)
      CONTRACTS.values.zip(values).each_with_index do |(check, value), index|
        assert check.call(value), "argument #{index + 1} out of contract: #{value.inspect} from #{data.inspect}"
      end
      assert_equal trees.inspect, arguments.decode(arguments.encode(trees)).inspect
      assert_equal values.inspect, arguments.values(arguments.load(arguments.dump(trees), "file")).inspect
    end
  end

  # An integer in range is its own 8 bytes (little-endian), so a value
  # libFuzzer saw compared can be written back into the input.
  def test_integers_in_range_are_their_own_bytes
    arguments = G::Arguments.new([G.integer(0..65_535), G.integer(-100..100)], "test")
    assert_equal [0x1F90, -3], arguments.decode([0x1F90, -3].pack("q<q<"))
    assert_equal [0x1F90, -3].pack("q<q<"), arguments.encode([0x1F90, -3])
  end

  def test_regression_files_hold_readable_literals
    arguments = G::Arguments.new([G.integer, G.float, G.string, G.bytes, G.symbol, G.optional(G.boolean),
                                  G.array(G.float), G.hash_of(G.symbol, G.string), G.struct(Point, x: G.integer)], "t")
    text = <<~TEXT
      ruzzy fuzz v1
      # a comment, and a blank line

      -42
      -Float::INFINITY
      "caf\\u00e9 \\"q\\"\\n\\x41"
      "\\xFF\\x00"
      :"odd name"
      nil
      [1.5, Float::NAN, 1e3]
      {mode: "fast", :other => ""}
      GenContracts::Point.new(x: 7)
    TEXT
    values = arguments.values(arguments.load(text, "f"))
    assert_equal [-42, -Float::INFINITY, "café \"q\"\nA", "\xFF\x00".b, :"odd name", nil], values.first(6)
    assert_equal [1.5, 1000.0], [values[6][0], values[6][2]]
    assert_predicate values[6][1], :nan?
    assert_equal({ mode: "fast", other: "" }, values[7])
    assert_equal Point.new(7, nil), values[8]
    assert_equal text.lines.reject { |line| line.start_with?("#") || line.strip.empty? }.size,
                 arguments.dump(arguments.load(text, "f")).lines.size
  end

  def test_bad_regression_files_say_where
    arguments = G::Arguments.new([G.integer(0..10), G.string], "t")
    {
      "1\n\"a\"\n" => /f:1:1: a regression file starts with the line "ruzzy fuzz v1"/,
      "ruzzy fuzz v1\n1\n\"abc\n" => /f:3:1: expected a closing " for this String/,
      "ruzzy fuzz v1\n[1,\n\"a\"\n" => /f:2:4: expected a literal/,
      "ruzzy fuzz v1\n1\n" => /f: 1 values for 2 arguments/,
      "ruzzy fuzz v1\n11\n\"a\"\n" => /f:2: 11 does not fit the generator of argument 1 \(IntegerGen\)/,
      "ruzzy fuzz v1\n1\nsystem(\"touch /tmp/ruzzy-evaluated\")\n" => /f:3:1: expected a literal/,
      "ruzzy fuzz v1\n1\nFile.new(path: \"x\")\n" => /f:3: File.new\(path: "x"\) does not fit the generator of arg/,
      "ruzzy fuzz v1\n1 2\n\"a\"\n" => /f:2:3: expected the end of the line after the literal, found "2"/
    }.each do |text, message|
      error = assert_raises(Ruzzy::RegressionFileError) { arguments.load(text, "f") }
      assert_match message, error.message
    end
    refute_path_exists "/tmp/ruzzy-evaluated"
  end

  def test_wrong_generator_arguments_say_what_was_expected
    {
      -> { G.integer(1.5..2) } => /Gen.integer takes a Range of Integers, got 1.5..2/,
      -> { G.integer(5..1) } => /Gen.integer: the range 5..1 is empty/,
      -> { G.integer(0..(2**64)) } => /wider than 2\*\*64/,
      -> { G.float(1...2) } => /Gen.float takes an inclusive Range of two numbers/,
      -> { G.string(max_length: -1) } => /Gen.string: max_length must be an Integer from 0/,
      -> { G.string(encoding: "UTF-16") } => /UTF-16 is a dummy encoding/,
      -> { G.string(encoding: "nope") } => /Gen.string: unknown encoding name - nope/,
      -> { G.array(1) } => /Gen.array takes Ruzzy::Gen generators, got 1/,
      -> { G.array(G.boolean, max_length: 256) } => /max_length must be an Integer from 0 to 255/,
      -> { G.one_of } => /Gen.one_of needs at least one generator/,
      -> { G.struct(Object) } => /Gen.struct takes a named Struct or Data class/,
      -> { G.struct(Point, z: G.integer) } => /GenContracts::Point has no field z/,
      -> { G.from([]) } => /Gen.from takes a non-empty list/,
      -> { G.map(G.integer) } => /Gen.map needs a block/,
      -> { G.recursive { |value| G.array(value).then { value } } } => /the generator never ends/,
      -> { G::Arguments.new([G.integer, "x"], "Ruzzy.fuzz") } => /Ruzzy.fuzz takes Ruzzy::Gen generators, got "x"/
    }.each do |call, message|
      error = assert_raises(ArgumentError) { call.call }
      assert_kind_of Ruzzy::InvalidArgumentsError, error
      assert_match message, error.message
    end
  end

  # Data (Ruby 3.2 and later) by keywords; every member needs a generator.
  if defined?(Data)
    Size = Data.define(:width, :height)

    def test_data_classes_are_built_and_written_by_name
      arguments = G::Arguments.new([G.struct(Size, width: G.integer(1..9), height: G.integer(1..9))], "t")
      value = arguments.values(arguments.decode("\x05\0\0\0\0\0\0\0\x07".b)).first
      assert_equal Size.new(width: 5, height: 7), value
      assert_equal "ruzzy fuzz v1\nTestGen::Size.new(width: 5, height: 7)\n",
                   arguments.dump(arguments.decode("\x05\0\0\0\0\0\0\0\x07".b))
      error = assert_raises(ArgumentError) { G.struct(Size, width: G.integer) }
      assert_match(/TestGen::Size needs a generator for height/, error.message)
    end
  end

  def test_shrinking_finds_small_values_that_still_fail
    arguments = G::Arguments.new([G.integer, G.string, G.array(G.integer(0..1000))], "t")
    trees = [123_456_789, "xxxxxxxx/etc/passwd-and-more", [5, 999, 700, 3, 12]]
    shrunk, calls = arguments.shrink(trees, seconds: 10) do |(number, text, list)|
      number > 1000 && text.include?("/etc/") && list.any? { |item| item > 500 }
    end
    assert_equal [1001, "/etc/", [501]], shrunk
    assert_operator calls, :<, Ruzzy::Gen::Arguments::SHRINK_CALLS
  end
end

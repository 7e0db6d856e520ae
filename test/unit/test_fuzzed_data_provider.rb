# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"

# Byte-level vectors for Ruzzy::FuzzedDataProvider, which gives exactly Ruzzy
# 0.8's values (so corpora saved by 0.8 keep their meaning), and for
# Ruzzy::LLVMFuzzedDataProvider, which follows LLVM's FuzzedDataProvider.h.
# Bytes come from the front, integers from the back; ranges consume only the
# bytes they need.
class TestFuzzedDataProvider < Minitest::Test
  def fdp(bytes)
    Ruzzy::FuzzedDataProvider.new(bytes.pack("C*"))
  end

  def llvm(bytes)
    Ruzzy::LLVMFuzzedDataProvider.new(bytes.pack("C*"))
  end

  # Values Ruzzy 0.8.0's provider gives for these inputs, one call after
  # another: what a harness decoding a saved 0.8 corpus file sees.
  RUZZY08_VECTORS = [
    ["\x05ab\\\\c\\Zrest\xE9\x7F\x80\x01\x02\x03\x04\x05\x06\x07\x08\x09\xFE\xFF\x10\x20",
     [[[:consume_uint, 2], 4128], [[:consume_int, 2], -257], [[:consume_int, 3], 460_809],
      [[:consume_int_in_range, -10, 1000], 520], [[:consume_bool], false],
      [[:consume_probability], 0.45100268709939334],
      [[:consume_random_length_string, 20], "\x05ab\\c"], [[:consume_bytes, 4], "re".b],
      [[:consume_float_in_range, -1.5, 2.5], -1.5], [[:pick_value_in_list, %w[a b c]], "a"],
      [[:consume_remaining_as_string], "".b]]],
    ["",
     [[[:consume_uint, 4], 0], [[:consume_int, 8], 0], [[:consume_int_in_range, -3, 3], -3],
      [[:consume_bool], false], [[:consume_probability], 0.0], [[:consume_float_in_range, 1.0, 9.0], 1.0],
      [[:consume_float], -Float::MAX], [[:consume_random_length_string], ""], [[:consume_bytes, 3], "".b]]],
    ["\xFF\xFF\x80\x00\x00\x00\x00\x00\x00\x00\x01",
     [[[:consume_int, 10], -2_361_183_241_434_822_606_847], [[:consume_uint, 12], 255]]],
    ["\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", [[[:consume_int, 11], -154_742_504_910_672_534_362_390_528]]],
    ["\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a",
     [[[:consume_float], -1.783565934679084e+308], [[:consume_int_in_range, -(2**100), 2**100], -(2**100) + 1],
      [[:consume_float], -Float::MAX]]],
    ["caf\xC3\xA9\\x", [[[:consume_random_length_string], "caf\xC3\xA9".b]]],
    ["abc",
     [[[:consume_random_length_string, -1], ""], [[:consume_bytes, -5], "".b], [[:consume_uint, -1], 0],
      [[:consume_int, 0], 0], [[:consume_float_in_range, 2, 2], 2]]]
  ].freeze

  def test_a_ruzzy08_corpus_decodes_to_the_same_values
    RUZZY08_VECTORS.each do |input, calls|
      provider = Ruzzy::FuzzedDataProvider.new(input.b)
      calls.each do |call, expected|
        actual = provider.public_send(*call)
        assert actual.eql?(expected),
               "#{input.inspect} #{call.inspect}: #{actual.inspect}, 0.8 gives #{expected.inspect}"
        assert_equal expected.encoding, actual.encoding, "#{input.inspect} #{call.inspect}" if expected.is_a?(String)
      end
    end
  end

  def test_remaining_bytes_and_consume_bytes_from_the_front
    p = fdp([1, 2, 3, 4])
    assert_equal 4, p.remaining_bytes
    bytes = p.consume_bytes(2)
    assert_equal "\x01\x02".b, bytes
    assert_equal Encoding::BINARY, bytes.encoding
    assert_equal 2, p.remaining_bytes
    assert_equal "\x03\x04".b, p.consume_bytes(10)
    assert_equal "", p.consume_bytes(1)
  end

  def test_consume_random_length_string
    p = Ruzzy::FuzzedDataProvider.new("ab\\\\c\\xrest".b)
    assert_equal "ab\\c", p.consume_random_length_string(100)
    assert_equal "rest", p.consume_remaining_as_string
    assert_equal "abc", Ruzzy::FuzzedDataProvider.new("abcdef".b).consume_random_length_string(3)
    assert_equal "abcdef", Ruzzy::FuzzedDataProvider.new("abcdef".b).consume_random_length_string
  end

  def test_consume_remaining_bytes
    p = fdp([9, 8, 7])
    p.consume_bytes(1)
    assert_equal "\x08\x07".b, p.consume_remaining_bytes
    assert_equal 0, p.remaining_bytes
  end

  def test_consume_uint_takes_bytes_from_the_back_least_significant_first
    p = fdp([0xaa, 0x01, 0x02])
    assert_equal 0x0102, p.consume_uint(2)
    assert_equal 1, p.remaining_bytes
    assert_equal 0xaa, p.consume_uint(1)
    assert_equal 0, p.consume_uint(4), "0 when the data runs out"
    assert_equal 0xffff_ffff_ffff_ffff, fdp([0xff] * 8).consume_uint(8)
    assert_equal (2**80) - 1, fdp([0xff] * 10).consume_uint(12), "any width, as many bytes as there are"
  end

  def test_consume_int_is_twos_complement
    assert_equal(-1, fdp([0x00, 0xff]).consume_int(1))
    assert_equal 127, fdp([0x7f]).consume_int(1)
    assert_equal(-256, fdp([0x00, 0x00, 0xff, 0x00]).consume_int(2))
    assert_equal 255, fdp([0xff]).consume_int(4), "too few bytes never reach the sign bit"
    assert_equal 0, fdp([]).consume_int(8)
  end

  def test_llvm_rules_take_the_last_byte_as_most_significant
    p = llvm([0xaa, 0x01, 0x02])
    assert_equal 0x0201, p.consume_uint(2)
    assert_equal 0xaa, p.consume_uint(1)
    assert_equal 0, p.consume_uint(4), "default when the data runs out"
    assert_equal(-128, llvm([0x00]).consume_int(1))
    assert_equal 127, llvm([0xff]).consume_int(1)
    assert_equal 0, llvm([0x80]).consume_int(1)
    assert_equal(-(2**63), llvm([]).consume_int(8), "the type minimum when the data runs out")
    assert_equal(-(2**15) + 0x0102, llvm([0x01, 0x02].reverse).consume_int(2))
    assert_in_delta 0.5, llvm([0, 0, 0, 0, 0, 0, 0, 0x80]).consume_probability, 1e-12
    assert_in_delta 1 / 256.0, fdp([1, 0, 0, 0, 0, 0, 0, 0]).consume_probability, 1e-12
    assert_raises(Ruzzy::InvalidArgumentsError) { llvm([1]).consume_uint(9) }
    assert_kind_of Ruzzy::FuzzedDataProvider, llvm([])
  end

  def test_consume_int_in_range_is_inclusive_and_takes_only_needed_bytes
    p = fdp([7, 200])
    assert_equal 10 + (200 % 11), p.consume_int_in_range(10, 20)
    assert_equal 1, p.remaining_bytes
    assert_equal 5, p.consume_int_in_range(5, 5)
    assert_equal 1, p.remaining_bytes, "a one-value range consumes nothing"
    assert_equal 7, fdp([0x07]).consume_int_in_range(0, 255)
    assert_equal 255, fdp([0xff]).consume_int_in_range(0, 255)
    assert_equal(-3, fdp([]).consume_int_in_range(-3, 3), "min when the data runs out")
    assert_equal (2**64) - 1 - (2**63), fdp([0xff] * 8).consume_int_in_range(-(2**63), (2**63) - 1)
    assert_equal (2**64) - 1, fdp([0xff] * 9).consume_int_in_range(0, 2**70), "wider ranges take 8 bytes"
    assert_equal (2**200) + 3, fdp([3]).consume_int_in_range(2**200, (2**200) + 5)
  end

  def test_consume_bool_uses_the_low_bit_of_one_byte
    p = fdp([0x02, 0x01])
    assert p.consume_bool
    refute p.consume_bool
    refute p.consume_bool, "false when the data runs out"
  end

  def test_consume_probability_uses_eight_bytes
    assert_in_delta 1.0, fdp([0xff] * 8).consume_probability, 1e-12
    assert_in_delta 0.0, fdp([]).consume_probability, 1e-12
    p = fdp([0] * 9)
    p.consume_probability
    assert_equal 1, p.remaining_bytes
  end

  def test_consume_float_in_range
    assert_in_delta 3.0, fdp([]).consume_float_in_range(3.0, 9.0), 1e-12
    assert_in_delta 9.0, fdp([0xff] * 8).consume_float_in_range(3.0, 9.0), 1e-9
    x = fdp((1..16).to_a).consume_float_in_range(-1.5, 2.5)
    assert_operator x, :>=, -1.5
    assert_operator x, :<=, 2.5
    assert_equal 2.0, fdp([1, 2]).consume_float_in_range(2.0, 2.0)
    assert fdp([0x80] * 9).consume_float.finite?
    assert_equal(-Float::MAX, fdp([]).consume_float)
  end

  def test_pick_value_in_list_array_range_and_hash
    assert_equal "c", fdp([2]).pick_value_in_list(%w[a b c])
    assert_equal "a", fdp([3]).pick_value_in_list(%w[a b c])
    assert_equal 12, fdp([2]).pick_value_in_list(10..20)
    assert_equal 10, fdp([11]).pick_value_in_list(10...21)
    assert_equal :y, fdp([1]).pick_value_in_list({ x: 1, y: 2 })
  end

  def test_unicode
    ascii = Ruzzy::FuzzedDataProvider.new("\x00hi!".b).consume_unicode(5)
    assert_equal "hi!", ascii
    assert_equal Encoding::UTF_8, ascii.encoding
    wide = Ruzzy::FuzzedDataProvider.new("\x01\xe9\x00\x00\x4e".b).consume_unicode(2)
    assert_equal "\u00e9\u4e00", wide
    clean = Ruzzy::FuzzedDataProvider.new("\x03\x00\xd8\x00\x00".b).consume_unicode(1)
    assert clean.valid_encoding?
    raw = Ruzzy::FuzzedDataProvider.new("\x03\x00\xd8\x00\x00".b).consume_unicode(1, surrogates: true)
    assert_equal "\xED\xA0\x80".b, raw.b
    refute raw.valid_encoding?
    1000.times do |i|
      text = Ruzzy::FuzzedDataProvider.new(Random.new(i).bytes(64)).consume_unicode(20)
      assert text.valid_encoding?, "input #{i}"
    end
  end

  def test_lists
    assert_equal [0x0201, 0], fdp([0x02, 0x01]).consume_int_list(2, 2)
    assert_equal [1, 0, 0], fdp([1]).consume_int_list_in_range(3, 0, 9)
    assert_equal 3, fdp([]).consume_float_list(3).size
    assert_equal [0.5, 0.5], fdp([]).consume_float_list_in_range(2, 0.5, 1.0)
    assert_equal [0.0], fdp([]).consume_probability_list(1)
  end

  def test_bad_arguments_raise_argument_error_tagged_for_ruzzy
    p = fdp([1, 2, 3])
    [
      -> { p.consume_int_in_range(2, 1) },
      -> { p.consume_float_in_range(2.0, 1.0) },
      -> { p.consume_float_in_range(0.0, Float::NAN) },
      -> { p.pick_value_in_list([]) },
      -> { p.pick_value_in_list(5...5) }
    ].each do |call|
      error = assert_raises(ArgumentError, &call)
      assert_instance_of ArgumentError, error, "test-unit's assert_raise(ArgumentError) checks instance_of?"
      assert_kind_of Ruzzy::InvalidArgumentsError, error
      assert_kind_of Ruzzy::Error, error
    end
    assert_raises(TypeError) { p.consume_bytes("3") }
    assert_raises(TypeError) { Ruzzy::FuzzedDataProvider.new(42) }
    error = assert_raises(ArgumentError) { p.consume_int_in_range(9, 1) }
    assert_equal "min (9) must be <= max (1)", error.message
    assert_equal 3, p.remaining_bytes, "failed calls consume nothing"
  end

  def test_negative_counts_take_nothing
    p = fdp([1, 2, 3])
    assert_equal "", p.consume_bytes(-1)
    assert_equal "", p.consume_random_length_string(-1)
    assert_equal 0, p.consume_uint(-1)
    assert_equal 0, p.consume_int(-8)
    assert_equal [], p.consume_int_list(-1, 1)
    assert_equal "", p.consume_unicode(-2)
    assert_equal 3, p.remaining_bytes
  end

  def test_the_file_can_be_required_on_its_own
    result = ruby("-e", <<~RUBY)
      require "ruzzy/fuzzed_data_provider"
      p Ruzzy::FuzzedDataProvider.new("\\x01\\x02".b).consume_uint(2)
      begin
        Ruzzy::FuzzedDataProvider.new("").pick_value_in_list([])
      rescue Ruzzy::Error => e
        p e.class
      end
    RUBY
    assert_exit 0, result
    assert_equal "258\nArgumentError\n", result.stdout
    assert_empty result.stderr, "no warning (Ruby 3.3+ warns about T_DATA classes that keep an allocator)"
  end
end

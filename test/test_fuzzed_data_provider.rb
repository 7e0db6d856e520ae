# frozen_string_literal: true

require_relative "test_helper"
require "ruzzy"

# Byte-level vectors for Ruzzy::FuzzedDataProvider, derived from the rules of
# LLVM's FuzzedDataProvider.h: bytes from the front, integers from the back
# (the last byte most significant), ranges consume only the bytes they need,
# defaults when the data runs out.
class TestFuzzedDataProvider < Minitest::Test
  def fdp(bytes)
    Ruzzy::FuzzedDataProvider.new(bytes.pack("C*"))
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

  def test_consume_uint_takes_bytes_from_the_back_most_significant_first
    p = fdp([0xaa, 0x01, 0x02])
    assert_equal 0x0201, p.consume_uint(2)
    assert_equal 1, p.remaining_bytes
    assert_equal 0xaa, p.consume_uint(1)
    assert_equal 0, p.consume_uint(4), "default when the data runs out"
    assert_equal 0xffff_ffff_ffff_ffff, fdp([0xff] * 8).consume_uint(8)
  end

  def test_consume_int_is_offset_from_the_type_minimum
    assert_equal(-128, fdp([0x00]).consume_int(1))
    assert_equal 127, fdp([0xff]).consume_int(1)
    assert_equal 0, fdp([0x80]).consume_int(1)
    assert_equal(-(2**63), fdp([]).consume_int(8))
    assert_equal(-(2**15) + 0x0102, fdp([0x01, 0x02].reverse).consume_int(2))
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
    assert_equal [0x0102 - 0x8000, -0x8000], fdp([0x01, 0x02].reverse).consume_int_list(2, 2)
    assert_equal [1, 0, 0], fdp([1]).consume_int_list_in_range(3, 0, 9)
    assert_equal 3, fdp([]).consume_float_list(3).size
    assert_equal [0.5, 0.5], fdp([]).consume_float_list_in_range(2, 0.5, 1.0)
    assert_equal [0.0], fdp([]).consume_probability_list(1)
  end

  def test_bad_arguments
    p = fdp([1, 2, 3])
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_bytes(-1) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_random_length_string(-1) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_int_in_range(2, 1) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_int_in_range(0, 2**65) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_uint(9) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_float_in_range(2.0, 1.0) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.pick_value_in_list([]) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.pick_value_in_list(5...5) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_int_list(-1, 1) }
    assert_raises(Ruzzy::InvalidArgumentsError) { p.consume_unicode(-2) }
    assert_raises(TypeError) { p.consume_bytes("3") }
    assert_raises(TypeError) { Ruzzy::FuzzedDataProvider.new(42) }
    error = assert_raises(ArgumentError) { p.consume_int_in_range(9, 1) }
    assert_match(/min \(9\) must be <= max \(1\)/, error.message)
    assert_equal 3, p.remaining_bytes, "failed calls consume nothing"
  end
end

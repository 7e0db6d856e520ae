# frozen_string_literal: true

# May use: error, native.

# This file may be required on its own, as with Ruzzy 0.8.
require_relative "error"
require_relative "native"
Ruzzy::Native.require_extension

module Ruzzy
  # Splits one fuzz input into typed values: lengths, flags, names, lists.
  #
  # Bytes and strings are taken from the front of the input; integers,
  # booleans, floats and choices from the back, so that one mutated byte
  # changes one decision. The core methods are native and give exactly Ruzzy
  # 0.8's values for the same bytes, so a corpus saved by 0.8 keeps its
  # meaning: integers read the bytes at the end with the last byte the least
  # significant, signed integers are two's complement, and when the input runs
  # out integers are 0, ranges their minimum, booleans false and strings
  # shorter. Ruzzy::LLVMFuzzedDataProvider has the same methods with the byte
  # rules of LLVM's FuzzedDataProvider.h instead.
  #
  #   fdp = Ruzzy::FuzzedDataProvider.new(data)
  #   name = fdp.consume_random_length_string(50)
  #   age = fdp.consume_int_in_range(0, 150)
  #   role = fdp.pick_value_in_list(%w[admin user guest])
  #
  # Native methods (Ruzzy 0.8's API):
  #
  # remaining_bytes:: bytes not consumed yet
  # consume_bytes(n):: up to +n+ bytes from the front (binary String)
  # consume_random_length_string(max = remaining):: at most +max+ characters,
  #   ended early by a backslash followed by anything but a backslash (`\\`
  #   stands for one backslash); UTF-8 when all ASCII, binary otherwise
  # consume_remaining_bytes, consume_remaining_as_string:: everything left
  # consume_uint(n), consume_int(n):: an integer of +n+ bytes (any +n+)
  # consume_int_in_range(min, max):: an Integer in min..max
  # consume_bool:: true or false from one byte
  # consume_probability:: a Float in 0.0..1.0 from 8 bytes
  # consume_float_in_range(min, max), consume_float:: a Float in range
  #
  # Counts below zero take nothing. Bad arguments (min > max, a NaN bound, an
  # empty list) raise ArgumentError tagged Ruzzy::InvalidArgumentsError.
  class FuzzedDataProvider
    # +count+ characters of valid UTF-8 from the front of the input. The
    # first byte chooses ASCII, 16-bit or full Unicode code points. With
    # +surrogates+, UTF-16 surrogate code points may appear: the String is
    # then tagged UTF-8 but not valid (for code that must cope with that).
    def consume_unicode(count, surrogates: false)
      _consume_unicode(count, surrogates ? true : false)
    end

    # One element of +list+: an Array, a Range of Integers, or a Hash (one
    # of its keys), chosen by consume_int_in_range(0, size - 1). Raises
    # InvalidArgumentsError when there is nothing to pick.
    def pick_value_in_list(list)
      case list
      when Range then pick_in_range(list)
      when Hash then pick_value_in_list(list.keys)
      else
        list = list.to_a unless list.respond_to?(:[]) && list.respond_to?(:size)
        raise InvalidArgumentsError, "list must not be empty" if list.empty?

        list[consume_int_in_range(0, list.size - 1)]
      end
    end

    # +count+ integers of +bytes+ bytes each (see consume_int).
    def consume_int_list(count, bytes)
      list_of(count) { consume_int(bytes) }
    end

    # +count+ integers in min..max.
    def consume_int_list_in_range(count, min, max)
      list_of(count) { consume_int_in_range(min, max) }
    end

    # +count+ finite Floats.
    def consume_float_list(count)
      list_of(count) { consume_float }
    end

    # +count+ Floats in min..max.
    def consume_float_list_in_range(count, min, max)
      list_of(count) { consume_float_in_range(min, max) }
    end

    # +count+ Floats in 0.0..1.0.
    def consume_probability_list(count)
      list_of(count) { consume_probability }
    end

    private

    def pick_in_range(range)
      first = range.begin
      last = range.end
      unless first.is_a?(Integer) && last.is_a?(Integer)
        raise InvalidArgumentsError, "can only pick from a Range of Integers with both ends, got #{range.inspect}"
      end

      last -= 1 if range.exclude_end?
      raise InvalidArgumentsError, "cannot pick from an empty range #{range.inspect}" if last < first

      consume_int_in_range(first, last)
    end

    def list_of(count, &)
      raise TypeError, "count must be an Integer, got #{count.inspect}" unless count.is_a?(Integer)

      Array.new([count, 0].max, &)
    end
  end

  # FuzzedDataProvider with the byte rules of LLVM's FuzzedDataProvider.h,
  # for inputs shared with C and C++ harnesses: integers read the bytes at the
  # end with the last byte the most significant, signed integers count up
  # from their minimum (an exhausted input gives the minimum), consume_uint
  # and consume_int take 0 to 8 bytes. Strings, ranges and booleans are as in
  # FuzzedDataProvider.
  class LLVMFuzzedDataProvider < FuzzedDataProvider
  end
end

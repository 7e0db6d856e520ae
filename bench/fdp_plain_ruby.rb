# frozen_string_literal: true

# The FuzzedDataProvider rules written in plain Ruby: the baseline the
# native Ruzzy::FuzzedDataProvider is compared with in bench/run.rb.
class PlainFuzzedDataProvider
  def initialize(data)
    @data = data
    @front = 0
    @back = data.bytesize
  end

  def remaining_bytes
    @back - @front
  end

  def consume_bytes(count)
    count = [count, remaining_bytes].min
    bytes = @data.byteslice(@front, count)
    @front += count
    bytes
  end

  def consume_random_length_string(max_length = remaining_bytes)
    result = +""
    max_length.times do
      break if remaining_bytes.zero?

      byte = take_front
      if byte == 0x5c && remaining_bytes.positive?
        byte = take_front
        break if byte != 0x5c
      end
      result << byte
    end
    result
  end

  def consume_int_in_range(min, max)
    range = max - min
    result = 0
    offset = 0
    while offset < 64 && (range >> offset).positive? && remaining_bytes.positive?
      @back -= 1
      result = ((result << 8) | @data.getbyte(@back)) & 0xffff_ffff_ffff_ffff
      offset += 8
    end
    result %= (range + 1) unless range == 0xffff_ffff_ffff_ffff
    min + result
  end

  def consume_bool
    consume_int_in_range(0, 255).odd?
  end

  def consume_probability
    consume_int_in_range(0, 0xffff_ffff_ffff_ffff).fdiv(0xffff_ffff_ffff_ffff)
  end

  def consume_float_in_range(min, max)
    min + ((max - min) * consume_probability)
  end

  def pick_value_in_list(list)
    list[consume_int_in_range(0, list.size - 1)]
  end

  private

  def take_front
    byte = @data.getbyte(@front)
    @front += 1
    byte
  end
end

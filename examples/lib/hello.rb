# frozen_string_literal: true

# A tiny "parser" with a bug hidden behind three checks (see examples/hello.rb).
module Hello
  def self.parse(data)
    return :empty if data.empty?
    return :no_magic unless data.getbyte(0) == 0x46 # "F"
    return :no_version unless data.getbyte(1) == 0x55 # "U"
    raise "Hello.parse: the FUZ record is not implemented" if data.getbyte(2) == 0x5a # "Z"

    :ok
  end
end

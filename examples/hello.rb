# frozen_string_literal: true

# The smallest useful harness: a parser with a bug behind three checks.
#
#   ruzzy examples/hello.rb -seed=1
#
# finds the input "FUZ" within seconds (the report shows the RuntimeError and
# its backtrace; libFuzzer saves the input as crash-<sha1>).

require "ruzzy"

# A tiny "parser" with a bug hidden behind three nested checks.
module Hello
  def self.parse(data)
    return :empty if data.empty?
    if data.getbyte(0) == 0x46 # "F"
      if data.getbyte(1) == 0x55 # "U"
        if data.getbyte(2) == 0x5a # "Z"
          raise "Hello.parse: the FUZ record is not implemented"
        end
      end
    end
    :ok
  end
end

Ruzzy.fuzz(lambda do |data|
  Hello.parse(data)
  nil
end)

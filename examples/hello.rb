# frozen_string_literal: true

# The smallest useful harness: a parser with a bug behind three checks.
#
#   ruzzy examples/hello.rb -seed=1
#
# finds the input "FUZ" within seconds: the report shows the RuntimeError and
# its Ruby backtrace, and libFuzzer saves the input as crash-<sha1>.

require "ruzzy"

# A tiny "parser" with a bug hidden behind three checks.
module Hello
  def self.parse(data)
    return :empty if data.empty?
    return :no_magic unless data.getbyte(0) == 0x46 # "F"
    return :no_version unless data.getbyte(1) == 0x55 # "U"
    raise "Hello.parse: the FUZ record is not implemented" if data.getbyte(2) == 0x5a # "Z"

    :ok
  end
end

# The target returns nil (keep going); any exception it raises is a finding.
Ruzzy.fuzz(lambda do |data|
  Hello.parse(data)
  nil
end)

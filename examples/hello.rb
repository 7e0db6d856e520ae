# frozen_string_literal: true

# The smallest useful harness: a parser with a bug behind three checks.
#
#   ruzzy examples/hello.rb -seed=1
#
# finds the input "FUZ" within seconds: the report shows the RuntimeError and
# its Ruby backtrace, and libFuzzer saves the input as crash-<sha1>.

require "ruzzy"

require_relative "lib/hello"

# The target returns nil (keep going); any exception it raises is a finding.
Ruzzy.fuzz(lambda do |data|
  Hello.parse(data)
  nil
end)

# frozen_string_literal: true

# A typed target: the bug needs a 16-bit port equal to a constant, a path
# under /etc/ and a true flag.
require "ruzzy"

PORT = 8_080

Ruzzy.fuzz(lambda { |port, path, verbose|
  raise "reached /etc/ on port #{port}" if port == PORT && path.start_with?("/etc/") && verbose
}, Ruzzy::Gen.integer(0..65_535), Ruzzy::Gen.string(max_length: 64), Ruzzy::Gen.boolean)

# frozen_string_literal: true

# A token validated by a regular expression.
require "ruzzy"

Ruzzy.fuzz(->(data) { raise "token" if data.match?(/\Akey=SECRET[0-9]{2};\z/n) })

# frozen_string_literal: true

# Oj.load in strict mode, and the result dumped again.
require "ruzzy"
require "oj"

Ruzzy.fuzz(lambda do |data|
  Oj.dump(Oj.load(data, mode: :strict), mode: :strict)
  nil
rescue Oj::ParseError, EncodingError
  nil
end)

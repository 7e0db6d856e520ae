# frozen_string_literal: true

require "ruzzy"
require "time"

Ruzzy.fuzz(lambda do |data|
  Time.parse(data)
  nil
rescue ArgumentError, RangeError, EncodingError
  nil
end)

# frozen_string_literal: true

require "ruzzy"
require "psych"

Ruzzy.fuzz(lambda do |data|
  Psych.safe_load(data)
  nil
rescue Psych::Exception, ArgumentError, EncodingError
  nil
end)

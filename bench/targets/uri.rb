# frozen_string_literal: true

require "ruzzy"
require "uri"

Ruzzy.fuzz(lambda do |data|
  URI.parse(data.force_encoding(Encoding::UTF_8))
  nil
rescue URI::Error, ArgumentError
  nil
end)

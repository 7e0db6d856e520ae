# frozen_string_literal: true

require "ruzzy"
require "csv"

Ruzzy.fuzz(lambda do |data|
  CSV.parse(data)
  nil
rescue CSV::MalformedCSVError, ArgumentError, EncodingError
  nil
end)

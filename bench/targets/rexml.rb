# frozen_string_literal: true

require "ruzzy"
require "rexml/document"

Ruzzy.fuzz(lambda do |data|
  REXML::Document.new(data)
  nil
rescue REXML::ParseException, ArgumentError, EncodingError
  nil
end)

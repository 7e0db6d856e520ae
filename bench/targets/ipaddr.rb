# frozen_string_literal: true

require "ruzzy"
require "ipaddr"

Ruzzy.fuzz(lambda do |data|
  IPAddr.new(data)
  nil
rescue ArgumentError, EncodingError # IPAddr::Error is an ArgumentError
  nil
end)

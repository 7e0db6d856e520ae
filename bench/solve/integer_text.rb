# frozen_string_literal: true

# A number written in text, parsed by Integer() and compared with a constant.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  number = Integer(data, exception: false)
  raise "magic number" if number == 271_828
end)

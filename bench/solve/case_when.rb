# frozen_string_literal: true

# A magic word among the branches of a case/when.
require "ruzzy"

Ruzzy.fuzz(lambda do |data|
  case data
  when "array" then :array
  when "object" then :object
  when "string" then :string
  when "xyzzy!" then raise "magic word"
  end
  nil
end)

# frozen_string_literal: true

# ruzzy examples/detectors/code_injection/fuzz.rb
# Finds the method injection in Calculator.apply (detector code_injection).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Calculator.apply(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/code_injection/fuzz_safe.rb
# Calculator.apply_safely allows only + - * /: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Calculator.apply_safely(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

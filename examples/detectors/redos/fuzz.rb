# frozen_string_literal: true

# ruzzy examples/detectors/redos/fuzz.rb
# Finds the catastrophic backtracking in QuotedList.valid? (detector redos).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  QuotedList.valid?(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

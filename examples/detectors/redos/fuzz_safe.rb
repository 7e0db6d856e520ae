# frozen_string_literal: true

# ruzzy examples/detectors/redos/fuzz_safe.rb
# QuotedList.valid_safely? matches in linear time: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  QuotedList.valid_safely?(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

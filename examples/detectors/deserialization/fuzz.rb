# frozen_string_literal: true

# ruzzy examples/detectors/deserialization/fuzz.rb
# Finds the unsafe deserialization in Preferences.parse (detector deserialization).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Preferences.parse(data)
  nil
})

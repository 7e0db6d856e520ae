# frozen_string_literal: true

# ruzzy examples/detectors/deserialization/fuzz_safe.rb
# Preferences.parse_safely uses YAML.safe_load: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Preferences.parse_safely(data)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/command_injection/fuzz_safe.rb
# The same tool with argument-array system: nothing to find.
require_relative "../sandbox"
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  NetTools.ping_safely(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/command_injection/fuzz.rb
# Finds the shell command injection in NetTools.ping (detector
# command_injection). No command ever runs: see ../sandbox.rb.
require_relative "../sandbox"
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  NetTools.ping(data.force_encoding(Encoding::UTF_8).scrub)
  nil
})

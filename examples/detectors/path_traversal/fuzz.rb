# frozen_string_literal: true

# ruzzy examples/detectors/path_traversal/fuzz.rb
# Finds the path traversal in Assets.read (detector path_traversal).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Assets.read(data)
  nil
})

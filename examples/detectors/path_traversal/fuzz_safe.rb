# frozen_string_literal: true

# ruzzy examples/detectors/path_traversal/fuzz_safe.rb
# Assets.read_safely keeps names inside ROOT: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  Assets.read_safely(data)
  nil
})

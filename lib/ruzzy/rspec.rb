# frozen_string_literal: true

# The public require path: `require "ruzzy/rspec"` (see test_frameworks/rspec.rb).
# May use: test_frameworks.
require_relative "test_frameworks/rspec"

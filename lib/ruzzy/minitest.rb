# frozen_string_literal: true

# The public require path: `require "ruzzy/minitest"` (see test_frameworks/minitest.rb).
# May use: test_frameworks.
require_relative "test_frameworks/minitest"

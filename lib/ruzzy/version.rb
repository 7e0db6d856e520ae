# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  VERSION = "1.0.0"
end

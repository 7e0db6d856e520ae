# frozen_string_literal: true

module Ruzzy
  VERSION = "1.0.0"
end

# frozen_string_literal: true

module Ruzzy
  VERSION = "0.1.0"
end

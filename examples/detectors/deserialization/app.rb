# frozen_string_literal: true

require "yaml"

# Reads the preferences a client sends as YAML, falling back to defaults
# when they do not parse.
module Preferences
  DEFAULTS = { "theme" => "light" }.freeze

  # Vulnerable: unsafe_load builds objects of any class the text names.
  def self.parse(text)
    merge(YAML.unsafe_load(text))
  rescue StandardError
    DEFAULTS
  end

  # Safe: safe_load builds only plain data.
  def self.parse_safely(text)
    merge(YAML.safe_load(text))
  rescue StandardError
    DEFAULTS
  end

  def self.merge(loaded)
    loaded.is_a?(Hash) ? DEFAULTS.merge(loaded) : DEFAULTS
  end
end

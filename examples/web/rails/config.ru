# frozen_string_literal: true

# The Rack entry point: `rackup` serves the app, `ruzzy rack examples/web/rails` fuzzes it.
require_relative "config/environment"

run Rails.application

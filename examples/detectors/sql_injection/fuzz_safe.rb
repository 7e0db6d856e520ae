# frozen_string_literal: true

# ruzzy examples/detectors/sql_injection/fuzz_safe.rb
# Directory#email_safely binds the name as a parameter: nothing to find.
require_relative "app"
require "ruzzy"

directory = Directory.new

Ruzzy.fuzz(lambda { |data|
  name = data.dup.force_encoding(Encoding::UTF_8)
  directory.email_safely(name) if name.valid_encoding?
  nil
})

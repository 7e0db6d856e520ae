# frozen_string_literal: true

# ruzzy examples/detectors/sql_injection/fuzz.rb
# Finds the SQL injection in Directory#email (detector sql_injection),
# although the app rescues the database's errors.
require_relative "app"
require "ruzzy"

directory = Directory.new

Ruzzy.fuzz(lambda { |data|
  name = data.dup.force_encoding(Encoding::UTF_8)
  directory.email(name) if name.valid_encoding?
  nil
})

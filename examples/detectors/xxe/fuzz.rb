# frozen_string_literal: true

# ruzzy examples/detectors/xxe/fuzz.rb
# Finds the XML external entity in OrderImport.read (detector xxe).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  OrderImport.read(data.dup.force_encoding(Encoding::UTF_8).scrub)
  nil
})

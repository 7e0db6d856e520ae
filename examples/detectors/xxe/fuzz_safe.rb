# frozen_string_literal: true

# ruzzy examples/detectors/xxe/fuzz_safe.rb
# OrderImport.read_safely parses with Nokogiri's defaults: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  OrderImport.read_safely(data.dup.force_encoding(Encoding::UTF_8).scrub)
  nil
})

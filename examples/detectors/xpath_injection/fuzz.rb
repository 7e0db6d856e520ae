# frozen_string_literal: true

# ruzzy examples/detectors/xpath_injection/fuzz.rb
# Finds the XPath injection in UserStore.email (detector xpath_injection).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  name, password = data.dup.force_encoding(Encoding::UTF_8).scrub.split("\n", 2)
  UserStore.email(name.to_s, password.to_s)
  nil
})

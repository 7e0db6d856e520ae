# frozen_string_literal: true

# ruzzy examples/detectors/ldap_injection/fuzz_safe.rb
# People.staff_safely escapes the name: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  People.staff_safely(data.dup.force_encoding(Encoding::UTF_8).scrub)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/ldap_injection/fuzz.rb
# Finds the LDAP filter injection in People.staff (detector ldap_injection).
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  People.staff(data.dup.force_encoding(Encoding::UTF_8).scrub)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/xpath_injection/fuzz_safe.rb
# UserStore.email_safely passes the input as XPath variables: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  name, password = data.dup.force_encoding(Encoding::UTF_8).scrub.split("\n", 2)
  UserStore.email_safely(name.to_s, password.to_s)
  nil
})

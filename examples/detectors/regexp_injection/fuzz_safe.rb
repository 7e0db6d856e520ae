# frozen_string_literal: true

# ruzzy examples/detectors/regexp_injection/fuzz_safe.rb
# Highlighter.highlight_safely escapes the term: nothing to find.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  term = Highlighter.term(data)
  Highlighter.highlight_safely(term) if term
  nil
})

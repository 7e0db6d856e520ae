# frozen_string_literal: true

# ruzzy examples/detectors/regexp_injection/fuzz.rb
# Finds the search term compiled unescaped in Highlighter.highlight
# (detector regexp_injection), although the app rescues the RegexpError.
require_relative "app"
require "ruzzy"

Ruzzy.fuzz(lambda { |data|
  term = Highlighter.term(data)
  Highlighter.highlight(term) if term
  nil
})

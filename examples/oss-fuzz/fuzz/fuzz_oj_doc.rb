# frozen_string_literal: true

# Oj::Doc, Oj's fast parser: open a document and read its root. Oj::ParseError is the answer
# to malformed JSON, and so is ArgumentError for a malformed number ("0."), which Oj::Doc
# hands to Float(); anything else, and every memory error in Oj's C code, is a finding.
require "ruzzy"
require "oj"

Ruzzy.fuzz(lambda do |data|
  Oj::Doc.open(data, &:fetch)
  nil
rescue Oj::ParseError, EncodingError, ArgumentError
  nil
end)

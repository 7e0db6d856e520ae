# frozen_string_literal: true

require "minitest"
require_relative "fuzz_test"

module Ruzzy
  # Fuzz tests in Minitest:
  #
  #   require "minitest/autorun"
  #   require "ruzzy/minitest"
  #
  #   class ParserFuzzTest < Minitest::Test
  #     fuzz_test "parses any document", ignore: [MyParser::Error] do |data|
  #       MyParser.parse(data)
  #     end
  #   end
  #
  # An ordinary run defines one test per file in test/fuzz/parses_any_document/
  # (crash files included), named after the file; `ruzzy run-test FILE NAME`
  # fuzzes the block instead. See Ruzzy::FuzzTest.
  #
  # With generators (Ruzzy::Gen) the block takes typed values, and findings
  # are saved as readable `ruzzy fuzz v1` files (docs/typed-fuzz-tests.md):
  #
  #     fuzz_test "any port and path", Ruzzy::Gen.integer(0..65_535), Ruzzy::Gen.string do |port, path|
  #       Router.route(port, path)
  #     end
  module Minitest
    # Declares a fuzz test, typed when +generators+ are given. +corpus+
    # overrides the corpus directory (relative to the test file); +ignore+
    # lists expected exceptions.
    def fuzz_test(name, *generators, corpus: nil, ignore: [], &block)
      receiver = -> { new("fuzz_#{FuzzTest.slug(name)}") }
      FuzzTest.declare(name, generators, corpus:, ignore:, receiver:, body: block) do |definition, path|
        label = path ? File.basename(path).gsub(/[^A-Za-z0-9]+/, "_") : "empty_input"
        define_method("test_fuzz_#{definition.slug}__#{label}") { FuzzTest.replay(definition, path, self) }
      end
    end
  end
end

Minitest::Test.extend(Ruzzy::Minitest)

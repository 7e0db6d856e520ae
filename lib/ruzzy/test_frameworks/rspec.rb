# frozen_string_literal: true

require "rspec/core"
require_relative "fuzz_test"

module Ruzzy
  # Fuzz tests in RSpec:
  #
  #   require "ruzzy/rspec"
  #
  #   RSpec.describe MyParser do
  #     fuzz_test "parses any document", ignore: [MyParser::Error] do |data|
  #       MyParser.parse(data)
  #     end
  #   end
  #
  # An ordinary run defines one example per file in spec/fuzz/parses_any_document/
  # (crash files included); `ruzzy run-test FILE NAME` fuzzes the block
  # instead. See Ruzzy::FuzzTest.
  module RSpec
    # Declares a fuzz test inside an example group, typed when
    # +generators+ (Ruzzy::Gen) are given (see Ruzzy::Minitest).
    def fuzz_test(name, *generators, corpus: nil, ignore: [], &block)
      FuzzTest.declare(name, generators, corpus:, ignore:, receiver: -> { new }, body: block) do |definition, path|
        it("#{name} with #{path ? File.basename(path) : "the empty input"}") { FuzzTest.replay(definition, path, self) }
      end
    end
  end
end

RSpec.configure { |config| config.extend(Ruzzy::RSpec) }

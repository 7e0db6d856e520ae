# frozen_string_literal: true

# A typed target: options named from a list of 20,000 names, one of which
# the code looks up and the bug needs. libFuzzer's comparison tables hold
# the missing key as text, but an input holds its choice from the list as
# a number; the structure-aware mutator sets the choice to the key the
# code wanted.
require "ruzzy"

NAMES = Array.new(20_000) { |number| "option-#{number}" }.freeze

Ruzzy.fuzz(lambda { |options|
  raise "retries set to #{options["option-17017"]}" if options.fetch("option-17017", 0) > 5
}, Ruzzy::Gen.hash_of(Ruzzy::Gen.from(NAMES), Ruzzy::Gen.integer(0..9), max_size: 4))

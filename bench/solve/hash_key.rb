# frozen_string_literal: true

# A magic key in a 64-entry Hash.
require "ruzzy"

TABLE = Array.new(63) { |i| ["key-#{format("%04x", i * 7919 % 65_536)}", i] }.to_h
TABLE["open-sesame"] = :magic

Ruzzy.fuzz(->(data) { raise "magic key" if TABLE[data] == :magic })

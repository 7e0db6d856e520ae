# frozen_string_literal: true

# FuzzedDataProvider operations per second, native vs plain Ruby. Prints
# "<operation> <native ops/s> <plain ops/s>" lines.
#
#   ruby bench/fdp.rb [ITERATIONS]

require "ruzzy"
require_relative "fdp_plain_ruby"

ITERATIONS = Integer(ARGV.fetch(0, "200000"))
INPUTS = Array.new(256) { |i| Random.new(i).bytes(64) }.freeze
CHOICES = %w[alpha beta gamma delta].freeze

OPERATIONS = {
  "consume_int_in_range(0, 1000)" => ->(p) { p.consume_int_in_range(0, 1000) },
  "consume_bytes(8)" => ->(p) { p.consume_bytes(8) },
  "consume_random_length_string(16)" => ->(p) { p.consume_random_length_string(16) },
  "consume_float_in_range(0.0, 1.0)" => ->(p) { p.consume_float_in_range(0.0, 1.0) },
  "consume_bool" => lambda(&:consume_bool),
  "pick_value_in_list(4 strings)" => ->(p) { p.pick_value_in_list(CHOICES) }
}.freeze

def rate(klass, operation)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  (ITERATIONS / 4).times do |i|
    provider = klass.new(INPUTS[i & 255])
    4.times { operation.call(provider) }
  end
  ITERATIONS / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
end

OPERATIONS.each do |name, operation|
  puts "#{name}\t#{rate(Ruzzy::FuzzedDataProvider, operation).round}\t#{rate(PlainFuzzedDataProvider, operation).round}"
end

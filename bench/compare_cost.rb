# frozen_string_literal: true

# Cost of one comparison with and without ruzzy's comparison hooks, outside
# libFuzzer. Prints "<integer ns> <string ns> <match ns> <failed match ns>"
# per call. With a KIND, runs only that comparison and prints nothing (for
# counting instructions: `rake bench` section "instructions").
#
#   ruby bench/compare_cost.rb plain|hooked [ITERATIONS [integer|string|match|fail]]

require "ruzzy"

mode, iterations, only = ARGV
iterations = Integer(iterations || 2_000_000)
Ruzzy::CompareHooks.install if mode == "hooked"

def per_call(iterations)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  yield iterations
  (Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - started).fdiv(iterations)
end

a = 12_345
b = 54_321
s = "header-value-1".b
t = "header-value-2".b
pattern = /\Aheader-(\w+)-\d\z/
miss = "header-value-x".b
case only
when nil then nil
when "integer" then iterations.times { a == b }
when "string" then iterations.times { s == t }
when "match" then iterations.times { pattern.match?(s) }
when "fail" then iterations.times { pattern.match?(miss) }
else abort "unknown comparison #{only}"
end
exit if only
empty = per_call(iterations) { |n| n.times { nil } }
integer = per_call(iterations) { |n| n.times { a == b } }
string = per_call(iterations) { |n| n.times { s == t } }
matched = per_call(iterations) { |n| n.times { pattern.match?(s) } }
failed = per_call(iterations) { |n| n.times { pattern.match?(miss) } }
puts [integer, string, matched, failed].map { |ns| ns - empty }.join(" ")

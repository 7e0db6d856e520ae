# frozen_string_literal: true

# One fixed-document workload (calls.rb) in a plain loop, no fuzzer, with
# or without Ruby's own branch coverage: what counting every branch arm
# through the interpreter's coverage events costs by itself, the floor
# under a fuzzer that gets its coverage from those events.
#
#   ruby ruby_coverage.rb PARSER none|branches SECONDS
#   ruby ruby_coverage.rb PARSER none|branches --calls=N
#
# Prints "us_per_call: N" (microseconds per execution, after a warm-up);
# with --calls=N, runs exactly N executions and no warm-up (for counting
# instructions: the difference of two counts over the difference of N).

require "coverage"

parser, mode, length = ARGV
unless ARGV.size == 3 && %w[none branches].include?(mode)
  abort "usage: ruby ruby_coverage.rb PARSER none|branches SECONDS|--calls=N"
end
fixed_calls = length.delete_prefix("--calls=") if length.start_with?("--calls=")
if mode == "branches"
  Coverage.setup(branches: true)
  Coverage.resume
end
require_relative "calls"
call = FixedDocuments::CALLS.fetch(parser).call

if fixed_calls
  Integer(fixed_calls).times { call.call }
  exit
end

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

seconds = length
warm_up = now + (Float(seconds) / 10)
call.call while now < warm_up
calls = 0
started = now
deadline = started + Float(seconds)
while now < deadline
  100.times { call.call }
  calls += 100
end
puts "us_per_call: #{((now - started) * 1e6 / calls).round(2)}"

# frozen_string_literal: true

# Cost per coverage event, measured without libFuzzer: the same target is
# loaded with ruzzy's coverage on ("traced"), off ("untraced") or with
# Ruby's own Coverage counting ("builtin"), and called in a loop. Prints "<ns per input> <events per input>".
#
#   ruby bench/events.rb traced|untraced|builtin ITERATIONS
#   ruby bench/events.rb count        # events per call

require "ruzzy"
require "coverage"

mode, iterations = ARGV
iterations = Integer(iterations || 200_000)
target = File.join(__dir__, "targets", "hundred_events.rb")

case mode
when "traced" then Ruzzy::Coverage.start
when "count", "builtin" then Coverage.start(lines: true, branches: true)
end
load target

if mode == "count"
  HundredEvents.run("x".b)
  result = Coverage.result.fetch(target)
  lines = result[:lines].compact.sum
  branches = result[:branches].values.sum { |arms| arms.values.sum }
  puts lines + branches
  exit
end

input = "x".b
HundredEvents.run(input) # warm up
started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
iterations.times { HundredEvents.run(input) }
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - started
puts elapsed.fdiv(iterations)

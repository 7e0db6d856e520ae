# frozen_string_literal: true

# Cost per coverage event, measured without libFuzzer: the same target is
# loaded with ruzzy's coverage on ("traced"), off ("untraced") or with
# Ruby's own Coverage counting ("builtin"), and called in a loop. Prints
# the nanoseconds per call. TARGET is bench/targets/hundred_events.rb
# (default: 25 loop iterations, 106 events) or hundred_ifs.rb (100 `if`s).
#
#   ruby bench/events.rb traced|untraced|builtin ITERATIONS [TARGET]
#   ruby bench/events.rb count [TARGET]   # events per call

require "ruzzy"
require "coverage"

mode = ARGV[0]
iterations = mode == "count" ? 0 : Integer(ARGV[1] || 200_000)
name = ARGV[mode == "count" ? 1 : 2] || "hundred_events"
target = File.join(__dir__, "targets", "#{name}.rb")

case mode
when "traced" then Ruzzy::Coverage.start
when "count", "builtin" then Coverage.start(lines: true, branches: true)
end
load target
# Size the map as Ruzzy.fuzz would for this code.
Ruzzy::Coverage.fit_map if mode == "traced"
TARGET = Object.const_get(name.split("_").map(&:capitalize).join)

if mode == "count"
  TARGET.run("x".b)
  result = Coverage.result.fetch(target)
  lines = result[:lines].compact.sum
  branches = result[:branches].values.sum { |arms| arms.values.sum }
  puts lines + branches
  exit
end

input = "x".b
TARGET.run(input) # warm up
started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
iterations.times { TARGET.run(input) }
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - started
puts elapsed.fdiv(iterations)

# frozen_string_literal: true

# The trivial target of the bridge benchmark.
#
#   ruzzy bench/trivial.rb -runs=N        # through libFuzzer
#   ruby bench/trivial.rb --loop N        # the same lambda in a bare loop

TARGET = ->(_data) { 0 }

if ARGV.first == "--loop"
  count = Integer(ARGV[1])
  sizes = Array.new(1024) { |i| (i * 7919) % 64 }
  source = Random.new(1).bytes(64)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  count.times { |i| TARGET.call(source.byteslice(0, sizes[i & 1023])) }
  puts Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
else
  require "ruzzy"
  Ruzzy.fuzz(TARGET)
end

# frozen_string_literal: true

# Runs a bench target (its path is the first argument) and, once a minute,
# appends "minute executions execs/s rss_mb raised" to the log file (the
# second argument). Exceptions the target raises (bugs the parsers have) are
# counted, not reported, so the run lasts its whole time. Used by
# bench/soak.rb:
#
#   ruzzy bench/soak_harness.rb bench/targets/csv.rb samples.tsv -- corpus -max_total_time=3600

require "ruzzy"

target, log = ARGV.first(2)

# Counts the inputs the target's lambda receives.
module SoakCounter
  class << self
    attr_accessor :runs, :raised
  end
  self.runs = 0
  self.raised = 0

  def fuzz(test_one_input, *args, **options)
    counted = lambda do |data|
      SoakCounter.runs += 1
      test_one_input.call(data)
    rescue StandardError
      SoakCounter.raised += 1
      nil
    end
    super(counted, *args, **options)
  end
end
Ruzzy.singleton_class.prepend(SoakCounter)

Thread.new do
  minute = 0
  previous = 0
  loop do
    sleep 60
    minute += 1
    runs = SoakCounter.runs
    rss_kb = File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i
    File.write(log, "#{minute}\t#{runs}\t#{(runs - previous) / 60.0}\t#{rss_kb / 1024.0}\t#{SoakCounter.raised}\n",
               mode: "a")
    previous = runs
  end
end

load target

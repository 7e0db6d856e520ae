# frozen_string_literal: true

# A harness that does the same work on every execution, whatever the input:
# one standard-library parser (BENCH_PARSER) on a fixed document, so that
# every fuzzer and configuration measured runs exactly the same Ruby code.
# BENCH_PARSER=hundred_ifs runs bench/targets/hundred_ifs.rb's 100 `if`s on
# the input instead. Runs under ruzzy and under Ruzzy 0.8 alike (through
# tracer.rb, or with `ruzzy` directly); see bench/run.rb fixed_documents.

require "ruzzy"

PARSER = ENV.fetch("BENCH_PARSER")

require_relative "calls"

if PARSER == "hundred_ifs"
  require_relative "../targets/hundred_ifs"
  Ruzzy.fuzz(lambda do |data|
    HundredIfs.run(data)
    nil
  end)
else
  call = FixedDocuments::CALLS.fetch(PARSER).call
  # BENCH_SWITCH_QUIET=1 (with RUZZY_TEST_PROBES=1 and quiet coverage on):
  # after the third input, every quiet method is switched off, whatever its
  # share of the time or a trial would decide (the tests' probes).
  switch = ENV["BENCH_SWITCH_QUIET"] == "1"
  inputs = 0
  Ruzzy.fuzz(lambda do |_data|
    call.call
    if switch && (inputs += 1) == 3
      Ruzzy::Native._quiet_coverage_probe_cost(0)
      Ruzzy::Native._quiet_coverage_tick(1_000)
    end
    nil
  end)
end

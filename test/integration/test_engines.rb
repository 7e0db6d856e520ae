# frozen_string_literal: true

require "digest/sha1"
require_relative "../test_helper"

# `ruzzy --engine=libafl` and RUZZY_ENGINE=libafl: the same harnesses on
# LibAFL's libFuzzer-compatible runtime, with ruzzy's findings, crash files,
# run limits and replays.
class TestEngines < Minitest::Test
  HELLO = File.join(EXAMPLES, "hello.rb")
  SAFE = "Ruzzy.fuzz(->(data) { data.include?(\"never\") ? 1 : nil; nil })"

  def setup
    require "ruzzy/engine/choice"
    prerequisite!(File.file?(Ruzzy::Engine::Choice.libafl_path), "LibAFL's runtime (bin/setup builds it)")
  end

  # Runs a harness that finds nothing with +words+ before it and +flags+
  # after it, through the ruzzy command or plain Ruby, and checks that it
  # ran its +runs+ inputs.
  def fuzz_safe(dir, *words, runs:, flags: [], command: :ruzzy, env: {})
    harness = write_harness(dir, SAFE)
    result = send(command, *words, harness, "-runs=#{runs}", *flags, chdir: dir, env:)
    assert_exit 0, result
    assert_match(/^Done #{runs} runs in \d+ second\(s\)$/, result.stderr)
    result
  end

  def test_finds_a_ruby_exception_and_writes_the_crash_file
    in_tmpdir do |dir|
      result = ruzzy("--engine=libafl", HELLO, "-max_total_time=120", chdir: dir)
      assert_exit 77, result
      assert_match(/using LibAFL's libFuzzer-compatible engine/, result.stderr)
      assert_match(/RuntimeError: Hello\.parse: the FUZ record is not implemented/, result.stderr)
      assert_match(%r{examples/lib/hello\.rb:\d+:in}, result.stderr)
      crashes = artifacts(dir)
      assert_equal 1, crashes.size, result.output
      input = File.binread(File.join(dir, crashes.first))
      assert_equal "crash-#{Digest::SHA1.hexdigest(input)}", crashes.first
      assert_match(%r{Test unit written to \./#{crashes.first}}, result.stderr)
      assert_match(/Minimise:  RUZZY_ENGINE=libfuzzer \S+ \S+ #{Regexp.escape(HELLO)} -minimize_crash=1/,
                   result.stderr)

      # The crash file reproduces under both engines.
      [[], ["--engine=libafl"]].each do |engine|
        replay = ruzzy(*engine, HELLO, crashes.first, chdir: dir)
        assert_exit 77, replay
        assert_match(/the FUZ record is not implemented/, replay.stderr)
      end
    end
  end

  def test_replays_input_files_and_says_so
    in_tmpdir do |dir|
      harness = write_harness(dir, SAFE)
      File.write(File.join(dir, "one"), "hello")
      File.write(File.join(dir, "two"), "")
      result = ruzzy("--engine=libafl", harness, "one", "two", chdir: dir)
      assert_exit 0, result
      assert_match(/Running: one\n.*Executed one in \d+ ms\nRunning: two\n.*Executed two/m, result.stderr)
      assert_match(/fuzzing was not performed/, result.stderr)
    end
  end

  def test_ends_at_runs_and_at_max_total_time
    in_tmpdir do |dir|
      fuzz_safe(dir, "--engine=libafl", runs: runs(2000))

      harness = write_harness(dir, SAFE)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = ruzzy("--engine=libafl", harness, "-max_total_time=2", "-seed=1", chdir: dir)
      assert_exit 0, result
      assert_match(/^Done \d+ runs in [23] second\(s\)$/, result.stderr)
      assert_match(/the libafl engine ignores -seed=1 \(LibAFL decides it\)/, result.stderr)
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 60
    end
  end

  # LibAFL's runtime refuses to start without a coverage map: blind runs get one.
  def test_fuzzes_without_coverage
    in_tmpdir do |dir|
      fuzz_safe(dir, "--no-coverage", "--engine=libafl", runs: runs(500))
    end
  end

  def test_ruzzy_engine_environment_picks_it_for_a_plain_ruby_harness
    in_tmpdir do |dir|
      result = fuzz_safe(dir, runs: runs(300), command: :ruby, env: { "RUZZY_ENGINE" => "libafl" })
      assert_match(/using LibAFL's libFuzzer-compatible engine/, result.stderr)
    end
  end

  # LibAFL's input-to-state stage never lengthens an input, so a number
  # the target parses from text is offered as a dictionary word instead.
  def test_the_program_numbers_are_dictionary_words
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { raise 'found' if Integer(data, exception: false) == 271_828 })")
      result = ruzzy("--engine=libafl", "harness.rb", "-runs=#{runs(200_000)}", chdir: dir, env: { "TMPDIR" => dir })
      assert_match(/INFO: ruzzy: 1 dictionary word from the literals of instrumented code/, result.stderr)
      assert_includes File.read(Dir.glob(File.join(dir, "ruzzy-*-dictionaries", "*.dict")).first), "\"271828\""
      assert_exit 77, result
      assert_match(/RuntimeError: found/, result.stderr)
    end
  end

  def test_a_flag_the_engine_does_not_have_is_named
    in_tmpdir do |dir|
      harness = write_harness(dir, SAFE)
      result = ruzzy("--engine=libafl", harness, "-reduce_inputs=0", "-runs=10", chdir: dir)
      assert_exit 1, result
      assert_match(/the libafl engine has no -reduce_inputs \(it takes -artifact_prefix, /, result.stderr)
    end
  end

  def test_custom_mutators_are_refused_and_typed_inputs_mutated_as_bytes
    in_tmpdir do |dir|
      harness = write_harness(dir, "Ruzzy.fuzz(->(data) { nil }, mutator: ->(data, max, seed) { data })")
      result = ruzzy("--engine=libafl", harness, "-runs=10", chdir: dir)
      assert_exit 1, result
      assert_match(/custom mutators and crossover do not run under the libafl engine \(yet\)/, result.stderr)

      typed = write_harness(dir, "Ruzzy.fuzz(->(n) { nil }, Ruzzy::Gen.integer(0..9))", name: "typed.rb")
      result = ruzzy("--engine=libafl", typed, "-runs=#{runs(200)}", chdir: dir)
      assert_exit 0, result
      assert_match(/typed inputs are mutated as bytes: the libafl engine has no custom mutator hooks/, result.stderr)
    end
  end

  # AddressSanitizer's shared runtime is preloaded behind LibAFL's: a
  # memory error in an instrumented C extension is ASan's report, with the
  # crash file and exit status 77, found with the extension's coverage.
  def test_an_asan_report_from_a_c_extension
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      result = ruzzy("--engine=libafl", "dummy", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/using LibAFL's libFuzzer-compatible engine/, result.stderr)
      assert_match(/ERROR: AddressSanitizer: heap-use-after-free/, result.stderr)
      refute_match(/WARNING: ruzzy: .* comes from/, result.stderr, "every hook is LibAFL's")
      crash = artifacts(dir).first
      assert_equal "HI", File.binread(File.join(dir, crash))[0, 2]
      assert_match(%r{^==ruzzy== Test unit written to \./#{crash}$}, result.stderr)
      backtrace = result.stderr[/SUMMARY: AddressSanitizer: .*\n(?:.*\n)*#{RUBY_BACKTRACE}((?:\tfrom .*\n)+)/, 1]
      assert_match(/:\d+:#{label("dummy_test_one_input")}$/, backtrace.to_s,
                   "the Ruby backtrace after the report (clang's runtime has no hook at its start)")
    end
  end

  def test_a_segfault_in_a_sanitized_c_extension_keeps_the_ruby_backtrace
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, File.join(FIXTURES, "c_ext", "faults.c"), sanitize: "address")
      write_harness(dir, "require_relative 'faults'\ndef parse(data) = Faults.segv(data)\n" \
                         "Ruzzy.fuzz(->(data) { parse(data); nil })")
      result = ruzzy("--engine=libafl", "--sanitizer=address", "harness.rb", "-runs=#{runs(1_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/ERROR: libFuzzer: deadly signal\n==ruzzy== Ruby backtrace of the fuzz target/, result.stderr)
      assert_match(/harness\.rb:\d+:in [`'](?:Object#)?parse'/, result.stderr)
      assert_equal "S", File.binread(File.join(dir, artifacts(dir).first))[0]
    end
  end

  # UndefinedBehaviorSanitizer's shared runtime behind LibAFL's: its
  # report, stack trace included, then the crash file and exit status 77.
  def test_an_ubsan_report_from_a_c_extension
    prerequisite! Ruzzy::Sanitizers.shared_runtime("undefined"), "UBSan's shared runtime (clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, File.join(FIXTURES, "c_ext", "faults.c"), sanitize: "signed-integer-overflow")
      write_harness(dir, "require_relative 'faults'\ndef check(data) = Faults.ubsan(data)\n" \
                         "Ruzzy.fuzz(->(data) { check(data); nil })")
      result = ruzzy("--engine=libafl", "--sanitizer=undefined", "harness.rb", "-runs=#{runs(2_000_000)}",
                     chdir: dir)
      assert_exit 77, result
      assert_match(/using LibAFL's libFuzzer-compatible engine/, result.stderr)
      assert_match(/runtime error: signed integer overflow/, result.stderr)
      assert_match(/#\d+ 0x\h+ in faults_ubsan .*faults\.c/, result.stderr, "UBSan's stack trace, symbolised")
      assert_match(/#{RUBY_BACKTRACE}(?:\tfrom .*\n)*\tfrom \S*harness\.rb:\d+:#{label("check")}$/, result.stderr,
                   "the Ruby backtrace after the report")
      crash = artifacts(dir).first
      assert_equal "U", File.binread(File.join(dir, crash))[0]
      assert_match(%r{^==ruzzy== Test unit written to \./#{crash}$}, result.stderr)
      assert_equal 1, result.stderr.scan("==ruzzy== Reproduce:").size
    end
  end

  # The sanitizer runtime preloaded in front of LibAFL's would take the
  # coverage registration (its hooks are empty): said before fuzzing.
  def test_a_preload_order_that_hides_the_coverage_is_an_error
    prerequisite! Ruzzy::Sanitizers.shared_runtime("address"), "AddressSanitizer's shared runtime (clang at install)"
    in_tmpdir do |dir|
      harness = write_harness(dir, SAFE)
      preload = "#{Ruzzy::Sanitizers.shared_runtime("address")}:#{Ruzzy::Engine::Choice.libafl_path}"
      result = ruby(harness, "-runs=10", chdir: dir,
                                         env: { "LD_PRELOAD" => preload, "RUZZY_ENGINE" => "libafl",
                                                "ASAN_OPTIONS" => "detect_leaks=0" })
      assert_exit 1, result
      assert_match(/LibAFL's runtime would not see ruzzy's coverage: __sanitizer_cov_\w+ comes from \S+clang_rt\.asan/,
                   result.stderr)
    end
  end

  # A campaign's harness: an exception the worker records, a deadly
  # signal that ends the worker (filed from its artifact), and branches.
  CAMPAIGN = <<~RUBY
    def header(data) = data.getbyte(0) == 7 && raise(TypeError, "bad header")

    Ruzzy.fuzz(lambda do |data|
      header(data)
      case data.getbyte(1)
      when 1 then :one
      when 2 then :two
      end
      Process.kill(:SEGV, Process.pid) if data == "SEGV"
      nil
    end)
  RUBY

  # Under LibAFL, whose progress lines are not libFuzzer's, the status line,
  # progress log and summary carry the workers' own numbers, and both kinds
  # of finding are filed while workers are ended and started again.
  def test_a_campaign_reports_the_workers_numbers_and_files_the_findings
    in_tmpdir do |dir|
      write_harness(dir, CAMPAIGN)
      result = ruzzy("--keep-going", "--engine=libafl", "harness.rb", "-max_total_time=15", "-seed=1", chdir: dir)
      assert_exit 77, result
      findings = File.join(dir, "ruzzy-findings")
      assert_campaign_numbers(result, findings)
      assert_campaign_findings(result, findings)
    end
  end

  def test_unknown_engine_and_sanitizer_combination_are_usage_errors
    result = ruzzy("--engine=afl", "x.rb")
    assert_exit 2, result
    assert_match(/unknown engine "afl"; use one of libfuzzer, libafl/, result.stderr)

    result = ruzzy("--engine=libafl", "--sanitizer=thread", "x.rb")
    assert_exit 2, result
    assert_match(/unknown sanitizer "thread"/, result.stderr)
  end

  private

  # The summary's executions are the sum of the workers' final counts in
  # the campaign log; the status lines and the progress log's last row
  # show executions, coverage and a corpus.
  def assert_campaign_numbers(result, findings)
    log = File.read(File.join(findings, "campaign.log"))
    counts = log.scan(/^stat::number_of_executed_units: (\d+)$/).flatten.map(&:to_i)
    assert_equal log.scan(/^==> worker \d+: /).size, counts.size, "every worker printed its count"
    executions = Integer(result.stderr[/^ruzzy: campaign: (\d+) executions in \d+ s/, 1] || "0", 10)
    assert_operator executions, :>, 0, result.stderr
    assert_equal counts.sum, executions, "the summary counts what the workers counted"

    status = result.stderr.scan(/^\[[\d:]+\] ([\d,]+) execs \(.*\bcov (\d+)  corpus (\d+)  findings/)
    refute_empty status, result.stderr
    status.each do |execs, coverage, corpus|
      assert_operator execs.delete(",").to_i, :>, 0, "executions in the status line"
      assert_operator coverage.to_i, :>, 0, "coverage in the status line"
      assert_operator corpus.to_i, :>, 0, "the corpus in the status line"
    end
    last = File.readlines(File.join(findings, "progress.csv")).last.split(",")
    assert_equal executions, Integer(last[1], 10), "the progress log's last row"
    assert_operator Integer(last[2], 10), :>, 0
    assert_operator Integer(last[3], 10), :>, 0
  end

  # The exception recorded by the worker and the deadly signal filed from
  # its artifact, each a group with its input; the summary counts them.
  def assert_campaign_findings(result, findings)
    groups = Dir.glob(File.join(findings, "*", "group.json")).to_h do |path|
      group = JSON.parse(File.read(path))
      [group.fetch("title"), group.merge("input" => File.binread(File.join(File.dirname(path), "input")))]
    end
    assert_equal "\x07".b, groups.fetch("TypeError: bad header")["input"][0], result.stderr
    signal = groups.values.find { |group| group["kind"] == "signal" }
    assert signal, "the deadly signal filed from its artifact: #{groups.keys}"
    assert_equal "SEGV", signal["input"]
    assert_match(/NEW  signal-\h+ \(signal\): deadly signal/, result.stderr)
    total = groups.values.sum { |group| group["findings"] }
    assert_match(/^ruzzy: #{total} finding\(s\) in #{groups.size} group\(s\)/, result.stderr)
    assert_empty Dir.children(File.join(findings, ".artifacts")), "every artifact filed"
  end
end

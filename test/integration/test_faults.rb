# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/identity"

# The fault matrix: deadly signals, timeouts, out-of-memory and Ruby
# exceptions through sanitized C frames. Each fault must be reported, with
# its artifact and libFuzzer's exit status, and nothing may be invented.
class TestFaults < Minitest::Test
  FAULTS = File.join(FIXTURES, "c_ext", "faults.c")

  # Harnesses with one fault behind one keyword, found with -dict (the
  # literal dictionary is off): a harness with two could reach either
  # first under an engine that solves comparisons by itself (LibAFL's,
  # whose runs -seed does not fix).
  RECURSING = <<~RUBY
    def deep(depth) = deep(depth + 1)

    Ruzzy.fuzz(->(data) { deep(0) if data == "DEEP"; nil })
  RUBY
  SLEEPING = <<~RUBY
    def slow_parse(data) = (sleep 10 if data == "SLEEP")

    Ruzzy.fuzz(->(data) { slow_parse(data); nil })
  RUBY

  def test_segfault_in_a_c_extension
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, "require_relative 'faults'\nRuzzy.fuzz(->(data) { Faults.segv(data); nil })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(1_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/ERROR: libFuzzer: deadly signal/, result.stderr)
      assert_match(/==ruzzy== Ruby backtrace of the fuzz target/, result.stderr)
      assert_match(/^DEDUP_TOKEN: <top>@harness\.rb$/, result.stderr, "the crash's identity")
      refute_match(/\[BUG\]/, result.stderr)
      assert_equal "S", File.binread(File.join(dir, artifacts(dir).first))[0]
      assert_match(%r{^==ruzzy== Reproduce: .*ruzzy harness\.rb \./#{artifacts(dir).first}$}, result.stderr)
    end
  end

  # glibc's assert() names the program as a plain `ruby harness.rb` does,
  # not by the tail of the title `$0 =` wrote over argv[0].
  def test_a_failed_assert_in_a_c_extension_names_the_program_ruby
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, "require_relative 'faults'\nRuzzy.fuzz(->(data) { Faults.assert(data); nil })")
      File.write(File.join(dir, "assert"), "A")
      result = ruzzy("harness.rb", "assert", chdir: dir)
      assert_exit 77, result
      assert_match(/^ruby: \S*faults\.c:\d+: faults_assert: Assertion `.*' failed\.$/, result.stderr)
    end
  end

  %w[SEGV ABRT].each do |signal|
    define_method("test_#{signal.downcase}_sent_by_the_target") do
      in_tmpdir do |dir|
        write_harness(dir, "Ruzzy.fuzz(->(data) { Process.kill(:#{signal}, Process.pid) if data == '#{signal}'; nil })")
        result = ruzzy("--no-literal-dict", "harness.rb", "-seed=1", "-runs=#{runs(1_000_000)}", "-only_ascii=1",
                       "-dict=dict", chdir: write_dict(dir, signal))
        assert_exit 77, result
        assert_match(/ERROR: libFuzzer: deadly signal/, result.stderr)
        assert_equal signal, File.binread(File.join(dir, artifacts(dir).first))
      end
    end
  end

  def test_deep_recursion_stays_a_ruby_exception
    in_tmpdir do |dir|
      write_harness(dir, RECURSING)
      result = ruzzy("--no-literal-dict", "harness.rb", "-seed=1", "-runs=#{runs(1_000_000)}", "-dict=dict",
                     chdir: write_dict(dir, "DEEP"))
      assert_exit 77, result
      assert_match(/^SystemStackError: stack level too deep$/, result.stderr)
    end
  end

  def test_timeout_reports_the_ruby_backtrace
    in_tmpdir do |dir|
      write_harness(dir, SLEEPING)
      result = ruzzy("--no-literal-dict", "harness.rb", "-seed=1", "-timeout=2", "-dict=dict",
                     chdir: write_dict(dir, "SLEEP"))
      assert_exit 70, result
      assert_match(/==ruzzy== the fuzz target ran past -timeout; Ruby backtrace/, result.stderr)
      assert_match(/harness\.rb:\d+:#{label("slow_parse")}/, result.stderr)
      assert_match(/ERROR: libFuzzer: timeout after/, result.stderr)
      timeouts = artifacts(dir, "timeout-").map { |name| File.binread(File.join(dir, name)) }
      assert_equal ["SLEEP"], timeouts
    end
  end

  def test_long_run_with_a_short_timeout_ends_normally
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.bytesize.odd? ? nil : 0 })")
      result = ruzzy("harness.rb", "-seed=1", "-timeout=4", "-max_total_time=10", chdir: dir)
      assert_exit 0, result
      seconds = result.stderr[/Done \d+ runs in (\d+) second/, 1]
      assert_operator seconds.to_i, :>=, 10, "the run must last its -max_total_time, not end at a timeout"
      assert_match(/stat::number_of_executed_units/, result.stderr)
    end
  end

  # libFuzzer checks for a timeout every -timeout/2+1 seconds (at 10 s for
  # -timeout=8); ruzzy's alarm checks every second.
  def test_a_timeout_is_reported_within_a_second_of_it
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { sleep(1000) if data.start_with?('H'); nil })")
      File.write(File.join(dir, "hang"), "H")
      result = ruzzy("harness.rb", "-timeout=8", "hang", chdir: dir)
      assert_exit 70, result
      seconds = result.stderr[/ALARM: working on the last Unit for (\d+) seconds/, 1]
      assert_includes [8, 9], seconds.to_i, result.stderr
      assert_match(/^==ruzzy== Reproduce: .*ruzzy harness\.rb hang$/, result.stderr)
      assert_match(/^==ruzzy== Minimise:  .*ruzzy harness\.rb -minimize_crash=1 -runs=100000 -timeout=5 hang$/,
                   result.stderr, "a hang is minimised with a short timeout")
    end
  end

  # Hangs of every kind end in a timeout report with the Ruby backtrace:
  # Ruby's own when the target comes back to Ruby (sleep, GC-heavy code, a
  # regular expression, which checks for interrupts), frames read from the
  # interpreter when it never does (a C loop). -timeout=2 keeps them short.
  HANGS = {
    "sleep" => ["def stuck(data) = sleep(1000)", /in [`'](?:Object#)?stuck'/],
    "gc" => [<<~RUBY, /in [`'](?:Object#)?stuck'/],
      def stuck(data)
        keep = []
        loop { keep << Array.new(1000) { |i| "x\#{i}" }; keep.shift if keep.size > 100 }
      end
    RUBY
    "regex" => ["def stuck(data) = /\\A(?:(a+)\\1?)*\\z/.match?(\"\#{'a' * 26}!\")", /in [`'](?:Object#)?stuck'/],
    "c_loop" => ["require_relative 'faults'\ndef stuck(data) = Faults.spin(data)", /in [`'](?:Object#)?stuck'/]
  }.freeze

  HANGS.each do |kind, (definition, frame)|
    define_method("test_hang_in_#{kind}_is_a_timeout_with_its_ruby_backtrace") do
      in_tmpdir do |dir|
        build_plain_extension(dir) if kind == "c_loop"
        write_harness(dir, "#{definition}\nRuzzy.fuzz(->(data) { stuck(data) if data.start_with?('H'); nil })")
        # (The redos detector would report the regex hang first: see
        # test_detectors.rb.)
        result = ruzzy("--disable-detectors=redos", "harness.rb", "-seed=1", "-timeout=2", "-runs=#{runs(1_000_000)}",
                       chdir: dir)
        assert_exit 70, result
        assert_match(/==ruzzy== the fuzz target ran past -timeout; Ruby backtrace/, result.stderr)
        assert_match(/harness\.rb:\d+:#{frame.source}/, result.stderr)
        if kind == "c_loop"
          assert_match(/read from the interpreter's frames, since the target did not come back to Ruby/,
                       result.stderr)
        end
        # Named alike whether Ruby (at its safe point) or the signal handler
        # (a hang in C; sleep on Ruby 3.3) read the frames.
        token = result.stderr[/^DEDUP_TOKEN: (.+)$/, 1]
        assert_match(/\Astuck@harness\.rb(?:--(?:stuck|<top>)@harness\.rb){1,2}\z/, token, "the hang's identity")
        assert_match(/ERROR: libFuzzer: timeout after/, result.stderr)
        assert_equal "H", File.binread(File.join(dir, artifacts(dir, "timeout-").first))[0]
        refute_start_up_frames(result.stderr)
      end
    end
  end

  # Under a sanitizer the native stack of a hang in C code starts where the
  # target was (not in libFuzzer's alarm handler), and the hang is named by
  # the C function it is stuck in.
  def test_a_hang_in_c_under_a_sanitizer_is_named_by_its_c_function
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, "require_relative 'faults'\ndef stuck(data) = Faults.spin(data)\n" \
                         "Ruzzy.fuzz(->(data) { stuck(data); nil })")
      File.write(File.join(dir, "hang"), "H")
      result = ruzzy("--sanitizer=address", "harness.rb", "-timeout=2", "hang", chdir: dir)
      assert_exit 70, result
      assert_match(/harness\.rb:\d+:#{label("stuck")}/, result.stderr)
      assert_match(/^    #0 0x\h+ in faults_spin \S*faults\.c:\d+/, result.stderr, "the stack starts in the loop")
      assert_equal ["faults_spin"], result.stderr.scan(/^DEDUP_TOKEN: (.*)$/).flatten, "the hang's identity"
      refute_match(/__sanitizer_print_stack_trace|fuzzer::PrintStackTrace|AlarmCallback/, result.stderr)
      refute_start_up_frames(result.stderr)
    end
  end

  # A hang in a C loop that spends half its time in libc: replayed five
  # times, the alarm interrupts it in the loop or in libc, and it is one
  # group every time (libc never names a group), the one its DEDUP_TOKEN
  # says.
  def test_a_hang_in_c_replayed_again_and_again_is_one_group
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, File.join(FIXTURES, "c_ext", "scanner.c"), sanitize: "address")
      write_harness(dir, "require_relative 'scanner'\nRuzzy.fuzz(->(data) { Scanner.scan(data); nil })")
      File.write(File.join(dir, "hang"), "H")
      runs = Array.new(5) { ruzzy("--sanitizer=address", "harness.rb", "-timeout=1", "hang", chdir: dir) }
      runs.each { |result| assert_exit 70, result }
      identities = runs.map { |result| Ruzzy::Findings::Identity.of_report(result.stderr) }
      assert_equal ["timeout--timeout--scanner_scan@scanner.c"], identities.map(&:token).uniq,
                   runs.map { |result| result.stderr[/^    #0 .*$/] }.join("\n")
      assert_equal ["scanner_scan"], runs.map { |result| result.stderr[/^DEDUP_TOKEN: (.*)$/, 1] }.uniq
    end
  end

  # The Ruby backtrace of a finding shows the fuzz target: not the `ruzzy`
  # command, ruzzy's own files, or the harness's top level that called
  # Ruzzy.fuzz.
  def refute_start_up_frames(stderr)
    frames = stderr.scan(/^\tfrom (.*)$/).flatten
    refute_empty frames
    refute frames.any? { |frame| frame.match?(%r{exe/ruzzy|/lib/ruzzy[/.]|in '<(?:top \(required\)|main)>'}) },
           "start-up frames in the backtrace:\n#{frames.join("\n")}"
  end

  def test_out_of_memory
    in_tmpdir do |dir|
      # The input grows until the memory check (once a second) catches it
      # running, however slow the machine: a few hundred MB a second.
      write_harness(dir, <<~RUBY)
        KEEP = []
        Ruzzy.fuzz(lambda do |data|
          while data == "OOM"
            KEEP << ("x" * 1_000_000)
            spin = 0
            spin += 1 while spin < 100_000
          end
          nil
        end)
      RUBY
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "oom"), "OOM")
      result = ruzzy("harness.rb", "-seed=1", "-rss_limit_mb=300", "-runs=#{runs(100_000)}", corpus, chdir: dir)
      assert_exit 71, result
      assert_match(/ERROR: libFuzzer: out-of-memory/, result.stderr)
      assert_equal 1, artifacts(dir, "oom-").size
      assert_match(%r{^==ruzzy== Reproduce: .*ruzzy harness\.rb \./#{artifacts(dir, "oom-").first}$}, result.stderr)
      assert_match(/==ruzzy== Ruby backtrace of the fuzz target(?:.*\n)*\tfrom .*harness\.rb:\d+:in .block in/,
                   result.stderr)
      assert_match(/^DEDUP_TOKEN: <top>@harness\.rb$/, result.stderr, "the OOM's identity")
    end
  end

  def test_deep_c_raises_under_asan_invent_nothing
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          Faults.deep_raise("X\#{data}")
          Faults.deep_raise("Y\#{data}")
        rescue ArgumentError
          Faults.deep_raise("Y")
          nil
        end)
      RUBY
      result = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(5000)}", chdir: dir)
      assert_exit 0, result
      refute_match(/AddressSanitizer: CHECK failed|ERROR: AddressSanitizer/, result.stderr)
      assert_match(/Done #{runs(5000)} runs/, result.stderr)
      # Without clearing, the same run ends in a false report on Ruby 3.1
      # (Debian 12, clang 14's runtime). Measured on 3.3 and 3.4 with clang
      # 21's runtime: no false report either way, the clearing is harmless.
      return unless RUBY_VERSION.start_with?("3.1.")

      unguarded = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(5000)}",
                        chdir: dir, env: { "RUZZY_ASAN_RAISE_HOOK" => "0" })
      assert_match(/AddressSanitizer/, unguarded.stderr.sub("INFO: ruzzy: AddressSanitizer present", ""))
    end
  end

  # A panic in ruzzy's own native code (here a coverage hook, made to panic
  # by the RUZZY_INJECT_PANIC test hook) is ruzzy's bug: reported as an
  # internal error with its own exit status, and not saved as a crash of
  # the target.
  def test_a_panicking_hook_is_an_internal_error_not_a_finding
    in_tmpdir do |dir|
      harness = write_harness(dir, "Ruzzy.fuzz(->(data) { data.empty? ? 0 : 1 })")
      result = ruzzy(harness, "-seed=1", "-runs=100", chdir: dir, env: { "RUZZY_INJECT_PANIC" => "coverage" })
      assert_exit 3, result
      assert_match(/internal error in ruzzy's native code \(a Rust panic at \S+: RUZZY_INJECT_PANIC=coverage\)/,
                   result.stderr)
      assert_match(/not a finding in the fuzz target: no crash file was written/, result.stderr)
      refute_match(/deadly signal|uncaught Ruby exception/, result.stderr)
      assert_equal ["harness.rb"], Dir.children(dir)
    end
  end

  private

  # A directory with a libFuzzer dictionary holding +word+, so the fuzzer
  # reaches the fault in a bounded number of runs.
  def write_dict(dir, word)
    File.write(File.join(dir, "dict"), "\"#{word}\"\n")
    dir
  end

  # The fault fixture built without any sanitizer (runs with the bundled
  # libFuzzer).
end

# The same fault matrix on LibAFL's runtime (RUZZY_ENGINE=libafl: the
# commands stay the same), whose crash, timeout and memory handling ruzzy
# takes over: the same reports, artifacts and exit statuses. AddressSanitizer
# does not run under it (yet).
class TestFaultsUnderLibAFL < TestFaults
  undef_method :test_deep_c_raises_under_asan_invent_nothing,
               :test_a_hang_in_c_under_a_sanitizer_is_named_by_its_c_function,
               :test_a_hang_in_c_replayed_again_and_again_is_one_group

  def setup
    require "ruzzy/engine/choice"
    prerequisite!(File.file?(Ruzzy::Engine::Choice.libafl_path), "LibAFL's runtime (bin/setup builds it)")
  end

  def ruzzy(*args, chdir: Dir.pwd, env: {})
    super(*args, chdir:, env: { "RUZZY_ENGINE" => "libafl" }.merge(env))
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/store"

# How a campaign groups findings: the identity read from each kind of
# report, and the findings directory that keeps one smallest input per group.
class TestFindings < Minitest::Test
  Identity = Ruzzy::Findings::Identity
  Store = Ruzzy::Findings::Store

  EXCEPTION = <<~TEXT
    ==13471== ERROR: ruzzy: uncaught Ruby exception in the fuzz target
    ArgumentError: bad header
        from /tmp/kg/three.rb:6:in `block in <top (required)>'
    DEDUP_TOKEN: ArgumentError--three.rb:<top>
  TEXT

  ASAN = <<~TEXT
    ==13490==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000058a32 at pc 0x7f0c bp 0x7ffd sp 0x7ffd
    READ of size 1 at 0x602000058a32 thread T0
        #0 0x7f0cffd3485f in faults_overflow /src/faults.c:58:24
        #1 0x7f0d0124952f  (/lib/x86_64-linux-gnu/libruby-3.1.so.3.1+0x24952f) (BuildId: 8627)
        #2 0x7f0d01253112 in rb_vm_exec (/lib/x86_64-linux-gnu/libruby-3.1.so.3.1+0x253112) (BuildId: 8627)
        #3 0x7f98a7957a53 in ruby_nonempty_memcpy /usr/include/ruby-3.1.0/ruby/internal/memory.h:659:16
        #4 0x7f0cfb6cd7e4 in ruzzy::rb::protect::trampoline::hb637 (.llvm.17083) ruzzy.6cde-cgu.0
        #5 0x7f0d01257ccd in parse_document /src/parser.c:120:3
        #6 0x7f0d01257cce in main (/usr/bin/ruby3.1+0x1150)

    0x602000058a32 is located 0 bytes to the right of 2-byte region
    allocated by thread T0 here:
        #0 0x7f0d014aecae in malloc (/gems/asan_with_fuzzer.so+0xaecae) (BuildId: aef9)
        #1 0x7f0cffd34707 in faults_overflow /src/faults.c:56:16
    SUMMARY: AddressSanitizer: heap-buffer-overflow /src/faults.c:58:24 in faults_overflow
  TEXT

  UBSAN = <<~TEXT
    /src/faults.c:17:11: runtime error: signed integer overflow: 2147483647 + 256 cannot be represented in type 'int'
        #0 0x7f7f4ca5d494 in faults_ubsan /src/faults.c:17:11
        #1 0x7f7f5124952f  (/lib/x86_64-linux-gnu/libruby-3.1.so.3.1+0x24952f) (BuildId: 8627)
  TEXT

  TIMEOUT = <<~TEXT
    ==ruzzy== the fuzz target ran past -timeout; Ruby backtrace (innermost last):
    \tfrom /tmp/kg/three.rb:7:in `loop'
    ALARM: working on the last Unit for 3 seconds
    ==14684== ERROR: libFuzzer: timeout after 3 seconds
        #0 0x0 in spin /tmp/kg/three.rb:7
        #1 0x0 in loop /tmp/kg/three.rb:7
        #2 0x0 in <top> /tmp/kg/three.rb:7
    SUMMARY: libFuzzer: timeout
  TEXT

  def test_each_kind_of_report_has_its_kind_token_and_title
    {
      EXCEPTION => ["exception", "exception--ArgumentError--three.rb:<top>", "ArgumentError: bad header"],
      ASAN => ["asan", "asan--heap-buffer-overflow--faults_overflow@faults.c--parse_document@parser.c",
               "AddressSanitizer: heap-buffer-overflow in faults_overflow (faults.c) < parse_document (parser.c)"],
      UBSAN => ["ubsan", "ubsan--signed integer overflow: N + N cannot be represented--faults_ubsan@faults.c",
                "UndefinedBehaviorSanitizer: signed integer overflow: N + N cannot be represented in " \
                "faults_ubsan (faults.c)"],
      TIMEOUT => ["timeout", "timeout--timeout--<top>@three.rb",
                  "timeout in <top> (three.rb)"]
    }.each do |report, (kind, token, title)|
      identity = Identity.of_report(report)
      assert_equal [kind, token, title], identity.to_a, report.lines.first
      assert_match(/\A#{kind}-\h{10}\z/, identity.group)
    end
  end

  # Wherever the alarm caught a hang in `loop { ... }`: in the block, in
  # Kernel#loop written in C (Ruby 3.1) or in Ruby (3.3 on).
  def test_a_hang_is_one_group_wherever_it_was_caught
    frames = [
      "#0 0x0 in <top> /t/h.rb:2\n#1 0x0 in loop /t/h.rb:2\n#2 0x0 in <top> /t/h.rb:2\n",
      "#0 0x0 in <top> /t/h.rb:2\n#1 0x0 in loop <internal:kernel>:168\n#2 0x0 in <top> /t/h.rb:2\n",
      "#0 0x0 in loop <internal:kernel>:160\n#1 0x0 in <top> /t/h.rb:2\n",
      "#0 0x0 in hash /t/h.rb:2\n#1 0x0 in <top> /t/h.rb:2\n#2 0x0 in loop /t/h.rb:2\n#3 0x0 in <top> /t/h.rb:2\n",
      "#0 0x0 in String#hash /t/h.rb:2\n#1 0x0 in <top> /t/h.rb:2\n#2 0x0 in Kernel#loop <internal:kernel>:168\n" \
      "#3 0x0 in <top> /t/h.rb:2\n"
    ]
    groups = frames.map do |stack|
      Identity.of_report("==1== ERROR: libFuzzer: timeout after 2 seconds\n#{stack}").group
    end
    assert_equal 1, groups.uniq.size, groups.inspect
  end

  # Ruby 3.4 names a method with its owner (Object#spin), 3.3 without.
  def test_a_hang_is_one_group_on_every_ruby
    groups = ["Object#spin", "spin"].map do |name|
      Identity.of_report("==1== ERROR: libFuzzer: timeout after 2 seconds\n" \
                         "#0 0x0 in #{name} /t/h.rb:3\n#1 0x0 in <top> /t/h.rb:5\n")
    end
    assert_equal ["timeout--timeout--spin@h.rb--<top>@h.rb"], groups.map(&:token).uniq
  end

  def test_line_numbers_and_addresses_do_not_split_a_group
    moved = ASAN.gsub(":58:24", ":61:2").gsub("0x602000058a32", "0x6020000aaaa0")
    assert_equal Identity.of_report(ASAN).group, Identity.of_report(moved).group
    other = ASAN.sub("in faults_overflow /src/faults.c:58:24", "in read_header /src/faults.c:58:24")
    refute_equal Identity.of_report(ASAN).group, Identity.of_report(other).group
  end

  # A segfault in C code without a sanitizer has no native frames: the
  # fuzz target's frames of ruzzy's Ruby backtrace tell two apart.
  def test_a_crash_without_native_frames_is_grouped_by_its_ruby_frames
    report = lambda do |method|
      "==1== ERROR: libFuzzer: deadly signal\n==ruzzy== Ruby backtrace of the fuzz target (innermost last):\n" \
        "\tfrom /t/harness.rb:3:in '<top (required)>'\n\tfrom #{Ruzzy::OWN_FILES}ruzzy.rb:114:in 'fuzz'\n" \
        "\tfrom /t/harness.rb:3:in 'block in <top (required)>'\n\tfrom /t/harness.rb:2:in '#{method}'\n" \
        "NOTE: libFuzzer has rudimentary signal handlers.\nSUMMARY: libFuzzer: deadly signal\n"
    end
    identity = Identity.of_report(report.call("parse"))
    assert_equal ["signal", "signal--deadly signal--parse@harness.rb--<top>@harness.rb",
                  "deadly signal in parse (harness.rb) < <top> (harness.rb)"], identity.to_a
    refute_equal identity.group, Identity.of_report(report.call("load")).group
  end

  def test_a_process_that_died_without_a_report_is_still_a_group
    identity = Identity.of_report("INFO: Seed: 1\n")
    assert_equal "crash", identity.kind
    assert_equal "the process ended without a report", identity.title
  end

  def test_the_store_keeps_the_smallest_input_and_counts_every_finding
    in_tmpdir do |dir|
      store = Store.new(dir)
      identity = Identity.of_report(EXCEPTION)
      assert_equal :new, store.record(identity, "EXEX", "first\n")
      assert_equal :repeat, store.record(identity, "EXEXEX", "larger\n")
      assert_equal :smaller, store.record(identity, "EX", "smaller\n")
      store.flush
      group = Store.new(dir).find(identity.group[0, 12])
      assert_equal [3, 2, "EX", "smaller\n"],
                   [group.findings, group.bytes, File.binread(group.input_path), File.read(group.report_path)]
      assert_empty Dir.glob(File.join(dir, "**", "*.tmp")), "every file is renamed into place"
    end
  end

  def test_a_later_process_goes_on_counting_and_only_smaller_inputs_replace
    in_tmpdir do |dir|
      identity = Identity.of_report(TIMEOUT)
      Store.new(dir).record(identity, "HANG", "report\n")
      later = Store.new(dir)
      assert_equal :repeat, later.record(identity, "HANGHANG", "report\n")
      refute later.offer_smaller(identity, "HANGS", "report\n")
      assert later.offer_smaller(identity, "HAN", "shorter\n")
      later.flush
      group = Store.new(dir).groups.first
      assert_equal [2, "HAN"], [group.findings, File.binread(group.input_path)]
    end
  end
end

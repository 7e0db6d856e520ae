# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/store"
require "ruzzy/findings/report"
require "ruzzy/engine/hang_trace"
require "ruzzy/cli/findings"
require "stringio"

# Routes as Sinatra defines them: blocks of a class body, each a method
# whose frames say `block in <class:RoutesAsBlocks>`.
class RoutesAsBlocks
  define_method(:items) { |id| Integer(id) }
  define_method(:orders) { |id| Integer(id) }
  define_method(:both) { |id| [items(id), orders(id)] }
end

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

  # A Ruby exception's title is its message: where it was raised (its
  # site) is kept beside it; the other kinds name their frames in the title.
  def test_each_kind_of_report_has_its_kind_token_title_and_site
    {
      EXCEPTION => ["exception", "exception--ArgumentError--three.rb:<top>", "ArgumentError: bad header", "three.rb:6"],
      ASAN => ["asan", "asan--heap-buffer-overflow--faults_overflow@faults.c--parse_document@parser.c",
               "AddressSanitizer: heap-buffer-overflow in faults_overflow (faults.c) < parse_document (parser.c)", nil],
      UBSAN => ["ubsan", "ubsan--signed integer overflow: N + N cannot be represented--faults_ubsan@faults.c",
                "UndefinedBehaviorSanitizer: signed integer overflow: N + N cannot be represented in " \
                "faults_ubsan (faults.c)", nil],
      TIMEOUT => ["timeout", "timeout--timeout--<top>@three.rb",
                  "timeout in <top> (three.rb)", nil]
    }.each do |report, (kind, token, title, site)|
      identity = Identity.of_report(report)
      assert_equal [kind, token, title, site], identity.to_a, report.lines.first
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

  # A hang in C code interrupted now in the loop, now in the libc function
  # it calls (with libc's debug information, its frame reads like any
  # other): the preload's DEDUP_TOKEN leaves libc out by address, and the
  # group follows it.
  def test_a_hang_in_c_is_one_group_wherever_the_alarm_interrupted_it
    headline = "==1== ERROR: libFuzzer: timeout after 2 seconds\n"
    libc = ["0x7e01 in __clock_gettime ./time/../sysdeps/unix/sysv/linux/clock_gettime.c:42:5",
            "0x7e02 in clock_gettime ./time/../sysdeps/unix/sysv/linux/clock_gettime.c:53:10"]
    loop = ["0x7f01 in scan_loop /src/ext/scanner.c:41:7", "0x7f02 in scanner_scan /src/ext/scanner.c:88:3",
            "0x7f03 in vm_call_cfunc_with_frame /build/ruby3.1/vm_insnhelper.c:3037 (libruby-3.1.so.3.1+0x1)"]
    token = "\nDEDUP_TOKEN: scan_loop--scanner_scan\n"
    groups = [loop, libc + loop].map do |frames|
      stack = frames.each_with_index.map { |frame, index| "    ##{index} #{frame}\n" }.join
      Identity.of_report("#{headline}#{stack}#{token}")
    end
    assert_equal ["timeout--timeout--scan_loop@scanner.c--scanner_scan@scanner.c"], groups.map(&:token).uniq
    assert_equal "timeout in scan_loop (scanner.c) < scanner_scan (scanner.c)", groups.last.title
  end

  # The alarm may land in a procedure linkage table stub (the jump through
  # which the extension calls libFuzzer's comparison hook), which the
  # symbolizer names after the object's _init: still the same group, also
  # from a report whose DEDUP_TOKEN named _init.
  def test_a_hang_interrupted_in_a_linkage_stub_is_the_same_group
    headline = "==1== ERROR: libFuzzer: timeout after 1 seconds\n"
    loop = "0x7f02 in scanner_scan /src/ext/scanner.c:18:23\n"
    stub = "0x7f01 in _init (/tmp/x/scanner.so+0x2110) (BuildId: 827c)\n"
    groups = [[[loop], "scanner_scan"], [[stub, loop], "scanner_scan"], [[stub, loop], "_init--scanner_scan"]]
    tokens = groups.map do |frames, token|
      stack = frames.each_with_index.map { |frame, index| "    ##{index} #{frame}" }.join
      Identity.of_report("#{headline}#{stack}\nDEDUP_TOKEN: #{token}\n").token
    end
    assert_equal ["timeout--timeout--scanner_scan@scanner.c"], tokens.uniq
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
                  "deadly signal in parse (harness.rb) < <top> (harness.rb)", nil], identity.to_a
    refute_equal identity.group, Identity.of_report(report.call("load")).group
  end

  def test_a_process_that_died_without_a_report_is_still_a_group
    identity = Identity.of_report("INFO: Seed: 1\n")
    assert_equal "crash", identity.kind
    assert_equal "the process ended without a report", identity.title
  end

  # The frames a hang stayed in, as the hang watch found them, make its
  # report; wherever it was stopped, the report names the loop.
  def test_a_hang_is_named_by_the_frames_it_stayed_in
    loop_frames = ["/t/h.rb:8:in `times'", "/t/h.rb:8:in `spin'", "/t/h.rb:17:in `block in <top (required)>'"]
    tokens = %w[step mix check].map do |helper|
      stopped_at = ["/t/h.rb:2:in `#{helper}'", "/t/h.rb:9:in `block in spin'", *loop_frames]
      report = "==1== ERROR: libFuzzer: timeout after 0.5 seconds (stopped in Ruby code; fuzzing goes on)\n" \
               "#{Ruzzy::Findings::Report.hang_frames(loop_frames, stopped_at)}"
      assert_includes report, "at /t/h.rb:2:in `#{helper}'", "where it was stopped is shown"
      Identity.of_report(report).token
    end
    assert_equal ["timeout--timeout--spin@h.rb--<top>@h.rb"], tokens.uniq
  end

  # A hang in a deep recursion (an exponential one: its depth varies from
  # moment to moment) is one group at any depth, with the harness's frames
  # in view however deep it is.
  def test_a_hang_in_a_recursion_is_named_the_same_at_any_depth
    outer = ["/t/tree.rb:20:in `each_node'", "/t/h.rb:17:in `block in <top (required)>'"]
    tokens = [3, 40, 400].map do |depth|
      stopped_at = (["/t/tree.rb:5:in `visit'"] * depth) + outer
      frames = Ruzzy::Findings::Report.hang_frames(nil, stopped_at)
      assert_includes frames, "<top> /t/h.rb:17", "the harness's frame is shown at depth #{depth}"
      Identity.of_report("==1== ERROR: libFuzzer: timeout after 25 seconds\n#{frames}").token
    end
    assert_equal ["timeout--timeout--visit@tree.rb--each_node@tree.rb--<top>@h.rb"], tokens.uniq
  end

  # A TracePoint follows the fuzzing thread: the loop's frames stay, the
  # methods its body calls come and go.
  def test_the_hang_trace_finds_the_loop_wherever_it_is
    helpers = Module.new do
      module_function

      def step(value) = value + 1
      def mix(value) = value ^ 3
      def spin(stop) = (step(mix(1)) until stop[0])
    end
    stop = [false]
    thread = Thread.new { helpers.spin(stop) }
    trace = Ruzzy::Engine::HangTrace.new(thread)
    sleep 0.05
    refute trace.follow(1)
    assert trace.follow(1), "following the same input goes on"
    # Until the spinning thread has run a while under the trace (a slow,
    # busy machine may not schedule it at once).
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    sleep 0.05 until trace.instance_variable_get(:@seen) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    sleep 0.2
    frames = trace.finish(1)
    stop[0] = true
    thread.join
    refute_nil frames, "the trace saw the spinning thread return"
    refute trace.follow(1), "a finished input is not followed again"
    refute trace.instance_variable_get(:@tracepoint).enabled?, "nor traced while it is stopped"
    assert_match(/in [`'](?:.*[#.])?spin'\z/, frames.first, frames.inspect)
    assert_nil trace.finish(2), "another input was not followed"
  end

  # After libFuzzer's alarm, ruzzy's own code runs on the fuzzing thread on
  # top of the target's stack, and the watch may start following then: the
  # returns of ruzzy's code, and any within HangTrace#unseen, are not the
  # hang's (seen, they named a hang by where the alarm stopped it).
  def test_the_hang_trace_does_not_see_ruzzys_own_returns
    helpers = Module.new do
      module_function

      def step(value) = value + 1
    end
    trace = Ruzzy::Engine::HangTrace.new(Thread.current)
    # Nothing but ruzzy's methods and C calls from here to the first look.
    trace.follow(1)
    Ruzzy::Findings.hang?("timeout")
    trace.unseen { helpers.step(1) }
    before = trace.frames(1)
    helpers.step(1)
    after = trace.frames(1)
    trace.finish(1)
    assert_nil before, "only ruzzy's code returned"
    refute_nil after, "the target's method returned"
  end

  # Recursion overflows anywhere in its cycle: one group, named by the
  # cycle's frames in one rotation.
  def test_a_stack_overflow_is_named_by_its_repeating_frames
    errors = [0, 1].map do |parity|
      recursion = Module.new do
        module_function

        def list(depth) = item(depth) + 1
        def item(depth) = list(depth) + 1
      end
      parity.zero? ? recursion.list(0) : recursion.item(0)
    rescue SystemStackError => e
      e
    end
    tokens = errors.map { |error| Ruzzy::Findings::Report.dedup_token(error) }
    assert_equal ["SystemStackError--test_findings.rb:item--test_findings.rb:list"], tokens.uniq
    native = ASAN.sub("heap-buffer-overflow on", "stack-overflow on").sub(/    #0 .*?\n\n/m) do
      frames = (%w[parse_value parse_list] * 5).first(9)
      frames.each_with_index.map { |name, index| "    ##{index} 0x1 in #{name} /src/p.c:#{index}:1\n" }.join << "\n"
    end
    shifted = native.sub(/    #0 .*?\n/, "").gsub(/#(\d+) 0x1/) { "##{Integer(::Regexp.last_match(1)) - 1} 0x1" }
    identities = [native, shifted].map { |report| Identity.of_report(report) }
    assert_equal ["asan--stack-overflow--parse_list@p.c--parse_value@p.c"], identities.map(&:token).uniq
  end

  # `note["title"]` raises TypeError in Integer#[]'s own frame for a note
  # that is 1, and in its caller's for one that is [] (the interpreter calls
  # Array#[] without a frame): one bug, one group.
  def test_a_method_written_in_c_does_not_split_a_group
    title = ->(note) { note["title"] }
    errors = [1, []].map do |note|
      title.call(note)
    rescue TypeError => e
      e
    end
    tokens = errors.map { |error| Ruzzy::Findings::Report.dedup_token(error) }
    assert_equal 1, tokens.uniq.size, tokens.inspect
    assert_match(/\ATypeError--test_findings.rb:test_a_method_written_in_c_does_not_split_a_group--/, tokens.first)
    # Hash#fetch wrapped by a comparison hook: two frames of C code at the
    # caller's line.
    hooked = KeyError.new("key not found")
    hooked.set_backtrace(["/app/a.rb:3:in `fetch'", "/app/a.rb:3:in `fetch'", "/app/a.rb:3:in `block in <main>'",
                          "/app/a.rb:9:in `<main>'"])
    assert_equal "KeyError--a.rb:<top>", Ruzzy::Findings::Report.dedup_token(hooked)
  end

  # Every block of a class body (a Sinatra route) has the body's label:
  # an exception's token keeps such a frame's line, so two routes raising
  # one exception are two groups, and one route is one group whatever the
  # input. Methods keep no line.
  def test_two_routes_of_one_class_body_are_two_groups
    routes = RoutesAsBlocks.new
    tokens = [[:items, "x"], [:orders, "x"], [:items, "y"]].map do |route, id|
      routes.public_send(route, id)
    rescue ArgumentError => e
      Ruzzy::Findings::Report.dedup_token(e)
    end
    items, orders, again = tokens
    line = ->(route) { RoutesAsBlocks.instance_method(route).source_location[1] }
    assert_match(/\AArgumentError--test_findings.rb:<class:RoutesAsBlocks>:#{line[:items]}--test_findings.rb:test_two_/,
                 items)
    assert_match(/\AArgumentError--test_findings.rb:<class:RoutesAsBlocks>:#{line[:orders]}--/, orders)
    assert_equal items, again
    error = assert_raises(ArgumentError) { routes.both("z") }
    site = Ruzzy::Findings::Identity.site(error.backtrace, Ruzzy::Findings::Report.dedup_token(error))
    assert_equal "test_findings.rb:#{line[:items]}", site
  end

  # An exception raised by a method that calls itself is one bug at any
  # depth (toml-rb's ValueOverwriteError from its recursive merge was one
  # group at depth 2 and another deeper); a mutual recursion keeps its
  # frames, and a method's blocks are the method.
  def test_a_recursion_depth_does_not_split_a_group
    merge = Module.new do
      module_function

      def merge(depth) = depth.zero? ? raise(ArgumentError, "duplicate key") : merge(depth - 1)
      def assign(depth) = merge(depth)
      def load(depth) = [depth].each { |one| assign(one) }
    end
    tokens = [0, 1, 2, 5, 50].map do |depth|
      merge.load(depth)
    rescue ArgumentError => e
      Ruzzy::Findings::Report.dedup_token(e)
    end
    assert_equal ["ArgumentError--test_findings.rb:merge--test_findings.rb:assign--test_findings.rb:load"], tokens.uniq
    mutual = KeyError.new("key not found")
    mutual.set_backtrace(["/app/p.rb:3:in `value'", "/app/p.rb:9:in `block in list'", "/app/p.rb:8:in `list'",
                          "/app/p.rb:4:in `value'", "/app/p.rb:20:in `parse'"])
    assert_equal "KeyError--p.rb:value--p.rb:list--p.rb:value", Ruzzy::Findings::Report.dedup_token(mutual)
  end

  # Action View names a compiled template's method with its path's hash and
  # the template's object id, new in every process (Redmine's preview page:
  # each worker and each replay made a group of its own).
  def test_a_templates_numbers_do_not_split_a_group
    labels = ["`_app_views_common__preview_html_erb__1979809271846736923_182340'",
              "`_app_views_common__preview_html_erb___1916129988717453566_38640'",
              "'ActionView::Base#_app_views_common__preview_html_erb__77_12'"]
    tokens = labels.map do |label|
      error = NoMethodError.new("undefined method `gsub!' for 1:Integer")
      error.set_backtrace(["/app/helpers/application_helper.rb:1394:in `catch_macros'",
                           "/app/views/common/_preview.html.erb:2:in #{label}",
                           "/app/controllers/previews_controller.rb:43:in `text'"])
      Ruzzy::Findings::Report.dedup_token(error)
    end
    assert_equal ["NoMethodError--application_helper.rb:catch_macros" \
                  "--_preview.html.erb:_app_views_common__preview_html_erb--previews_controller.rb:text"], tokens.uniq
    hangs = labels.first(2).map do |label|
      Identity.of_report("==1== ERROR: libFuzzer: timeout after 2 seconds\n" \
                         "#0 0x0 in #{label.delete("`'")} /app/views/common/_preview.html.erb:2\n")
    end
    assert_equal 1, hangs.map(&:token).uniq.size, hangs.map(&:token).inspect
  end

  # Minitest assertions as a fuzz target makes them: the innermost frame
  # outside Minitest is the user's assertion.
  def minitest_checks
    require "minitest"
    Class.new do
      include Minitest::Assertions

      def assertions = 0
      def assertions=(_count); end

      def sizes_and_sums(value, back)
        assert_equal value.bytesize, back.bytesize
        assert_equal value.sum, back.sum
      end

      def round_trip(value, back) = assert_equal(value, back)
      def in_range(value) = assert(value < 10, "#{value} is out of range")
    end.new
  end

  # The token of the failed assertion each of +failing+ raises.
  def assertion_tokens(*failing)
    assertions = Ruzzy::Findings::BugShape::ASSERTIONS.select { Object.const_defined?(_1) }.map { Object.const_get(_1) }
    failing.map do |failure|
      error = begin
        failure.call
      rescue *assertions => e
        e
      end
      assert_kind_of Exception, error, "a failed assertion"
      Ruzzy::Findings::Report.dedup_token(error)
    end
  end

  # "file:line" of the line +offset+ lines into +method+ of +object+.
  def line_of(object, method, offset = 0)
    "#{File.basename(__FILE__)}:#{object.method(method).source_location[1] + offset}"
  end

  # A failed assertion is named by its call site and the framework's
  # method it called: two assertions of one method are two bugs, even
  # when their messages read alike ("Expected: N Actual: N" here).
  def test_two_assertions_of_one_method_are_two_groups
    checks = minitest_checks
    tokens = assertion_tokens(-> { checks.sizes_and_sums("ab", "abc") }, -> { checks.sizes_and_sums("ab", "ac") },
                              -> { checks.in_range(12) })
    assert_equal ["Minitest::Assertion--#{line_of(checks, :sizes_and_sums, 1)}--assert_equal",
                  "Minitest::Assertion--#{line_of(checks, :sizes_and_sums, 2)}--assert_equal",
                  "Minitest::Assertion--#{line_of(checks, :in_range)}--assert"], tokens
  end

  # One assertion is one bug, whatever values its message quotes and
  # however the framework prints them: nil inline, a long string as a diff.
  def test_one_assertion_is_one_group_however_its_values_print
    checks = minitest_checks
    tokens = assertion_tokens(-> { checks.round_trip("header", nil) },
                              -> { checks.round_trip("header", "header with a long tail: #{"x" * 40}") },
                              -> { checks.round_trip([1, "a"], { 1 => "a" }) })
    assert_equal ["Minitest::Assertion--#{line_of(checks, :round_trip)}--assert_equal"], tokens.uniq
  end

  # RSpec's assertion is the expectation's `to` or `not_to`: three
  # expectations are three groups (two read alike, "expected: N got: N").
  def test_an_rspec_expectation_is_named_by_its_call_site_and_kind
    begin
      require "rspec/expectations"
    rescue LoadError
      skip "rspec-expectations is not installed"
    end
    spec = Class.new do
      include RSpec::Matchers

      def check(value)
        expect(value).not_to be_nil
        expect(value.bytesize).to eq(2)
        expect(value.sum).to eq(195)
      end
    end.new
    tokens = assertion_tokens(-> { spec.check(nil) }, -> { spec.check("abc") }, -> { spec.check("abcd") },
                              -> { spec.check("ac") })
    assert_equal [1, 2, 2, 3].map { |offset| line_of(spec, :check, offset) }
                             .zip(%w[not_to to to to])
                             .map { |site, kind| "RSpec::Expectations::ExpectationNotMetError--#{site}--#{kind}" },
                 tokens
  end

  # A failed assertion raises in the test framework: its site is the
  # user's assertion, where the title alone does not say which one failed.
  def test_a_failed_assertions_site_is_the_users_assertion
    checks = minitest_checks
    error = begin
      checks.round_trip("header", nil)
    rescue Minitest::Assertion => e
      e
    end
    report = "#{Ruzzy::Findings::Report.describe_exception(error)}" \
             "DEDUP_TOKEN: #{Ruzzy::Findings::Report.dedup_token(error)}\n"
    assert_match(%r{from .*minitest/assertions\.rb:}, report, "the report shows Minitest's frames")
    assert_equal line_of(checks, :round_trip), Identity.of_report(report).site
    # Read where the framework is not loaded (a supervisor, `ruzzy
    # findings minimise`), its frames are told by the token.
    elsewhere = <<~TEXT
      ==1== ERROR: ruzzy: uncaught Ruby exception in the fuzz target
      Minitest::Assertion: Expected: 1
          from /opt/gems/minitest-9/lib/minitest/assertions.rb:9:in `assert'
          from /src/t.rb:7:in `check'
      DEDUP_TOKEN: Minitest::Assertion--t.rb:7--assert
    TEXT
    assert_equal "t.rb:7", Identity.of_report(elsewhere).site
  end

  # Groups whose titles read the same (two places raising one message)
  # are told apart by where they were raised, and groups raised at one
  # site (one line raising TypeError for one input and NoMethodError for
  # another) show it; a title and site of its own, or a group filed before
  # sites were kept, shows as it is.
  def test_titles_that_read_the_same_name_where_they_were_raised
    in_tmpdir do |dir|
      store = Store.new(dir)
      { 6 => "<top>", 9 => "parse" }.each do |line, method|
        report = EXCEPTION.sub(":6:in", ":#{line}:in").sub("three.rb:<top>", "three.rb:#{method}")
        store.record(Identity.of_report(report), "EX", report)
      end
      other = EXCEPTION.sub("bad header", "bad body").sub("three.rb:<top>", "three.rb:body")
      store.record(Identity.of_report(other), "EX", other)
      alone = EXCEPTION.sub("bad header", "bad tail").sub(":6:in", ":12:in").sub("three.rb:<top>", "three.rb:tail")
      store.record(Identity.of_report(alone), "EX", alone)
      old = File.join(dir, "exception-0123456789")
      FileUtils.mkdir_p(old)
      File.write(File.join(old, Store::GROUP), JSON.generate(kind: "exception", token: "exception--old",
                                                             title: "RuntimeError: old", findings: 1, bytes: 2))
      groups = Store.new(dir).groups
      sites = groups.map { |group| [group.title[/: (.*)/, 1], group.site] }.sort_by(&:to_s)
      assert_equal [["bad body", "three.rb:6"], ["bad header", "three.rb:6"], ["bad header", "three.rb:9"],
                    ["bad tail", "three.rb:12"], ["old", nil]], sites
      header, *lines = Ruzzy::Campaign::Display.table(groups)
      titles = lines.map { |line| line[header.index("WHAT")..] }
      assert_equal ["ArgumentError: bad body (at three.rb:6)", "ArgumentError: bad header (at three.rb:6)",
                    "ArgumentError: bad header (at three.rb:9)", "ArgumentError: bad tail", "RuntimeError: old"],
                   titles.sort
    end
  end

  # `ruzzy findings show PREFIX` names one group: a prefix of several
  # lists them, to name one of them.
  def test_a_prefix_of_several_groups_lists_them
    in_tmpdir do |dir|
      store = Store.new(dir)
      [EXCEPTION, EXCEPTION.sub("bad header", "bad body").sub("three.rb:<top>", "three.rb:body")].each do |report|
        store.record(Identity.of_report(report), "EX", report)
      end
      names = store.groups.map(&:name)
      error = assert_raises(Ruzzy::CLI::UsageError) do
        Ruzzy::Findings::Command.new([dir, "show", "exception-"], out: StringIO.new, err: StringIO.new).run
      end
      assert_match(/2 groups in .* start with "exception-"; name one/, error.message)
      names.each { |name| assert_match(/^. #{name} .*: bad (header|body) \(at three.rb:6\)$/, error.message) }
      none = assert_raises(Ruzzy::CLI::UsageError) do
        Ruzzy::Findings::Command.new([dir, "show", "timeout-"], out: StringIO.new, err: StringIO.new).run
      end
      assert_match(/no group "timeout-"/, none.message)
    end
  end

  # `ruzzy findings show` prints the commands once, below the report, for
  # where the findings directory is now: a report filed with Reproduce and
  # Minimise lines of its own (a timeout's, a crash's) does not repeat them.
  def test_show_prints_the_commands_once
    in_tmpdir do |dir|
      store = Store.new(dir)
      filed = "#{EXCEPTION}==ruzzy== Reproduce: ruzzy moved/harness.rb moved/input\n" \
              "==ruzzy== Minimise:  ruzzy findings moved minimise exception-0\n"
      store.record(Identity.of_report(filed), "EX", filed)
      store.write_campaign("command" => %w[ruzzy harness.rb], "directory" => dir)
      out = StringIO.new
      Ruzzy::Findings::Command.new([dir, "show", "exception-"], out:, err: StringIO.new).run
      assert_equal 1, out.string.scan(/Reproduce: /).size, out.string
      assert_equal 1, out.string.scan(/Minimise: /).size, out.string
      refute_match(/moved/, out.string)
      assert_match(/^Reproduce: .*#{store.groups.first.name}/, out.string)
    end
  end

  # A smaller input's finding replaces the group's input, report and
  # title together: they always describe the same finding.
  def test_a_groups_title_is_that_of_its_input
    in_tmpdir do |dir|
      store = Store.new(dir)
      report = ->(key) { EXCEPTION.sub("ArgumentError: bad header", "ArgumentError: bad key #{key}") }
      first = Identity.of_report(report.call("KEYKEY"))
      store.record(first, "KEYKEY", report.call("KEYKEY"))
      smaller = Identity.of_report(report.call("KEY"))
      assert_equal first.group, smaller.group
      assert_equal :smaller, store.record(smaller, "KEY", report.call("KEY"))
      group = Store.new(dir).groups.first
      assert_equal "ArgumentError: bad key KEY", group.title
      assert_includes File.read(group.report_path), group.title
    end
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

  # A campaign's workers record into one directory at once: two that find
  # the same bug together make one group, announced once, every finding
  # counted, the smallest input kept.
  def test_processes_recording_the_same_bug_at_once_make_one_group_and_count_every_finding
    in_tmpdir do |dir|
      identity = Identity.of_report(EXCEPTION)
      outcomes = record_at_once(dir, identity, PROCESSES, FINDINGS)
      assert_equal 1, outcomes.sum { |tally| tally.fetch(:new, 0) }, outcomes.inspect
      groups = Store.new(dir).groups
      assert_equal 1, groups.size
      group = groups.first
      assert_equal PROCESSES * FINDINGS, group.findings, "every process's findings counted"
      assert_equal 2 + PROCESSES, group.bytes, "the smallest input of all"
      assert_equal "E" * group.bytes, File.binread(group.input_path)
      assert_match(/report 0/, File.read(group.report_path), "its own report")
    end
  end

  PROCESSES = 4
  FINDINGS = 300

  # Forks +processes+ that each record +findings+ findings of +identity+
  # into +dir+ at once, with inputs that shrink (process 0's last input is
  # the smallest of all); returns each one's tally of outcomes.
  def record_at_once(dir, identity, processes, findings)
    start = File.join(dir, "start")
    readers = Array.new(processes) do |index|
      reader, writer = IO.pipe
      fork do
        reader.close
        sleep 0.01 until File.exist?(start)
        store = Store.new(dir)
        outcomes = Array.new(findings) do |count|
          store.record(identity, "E" * (2 + (processes * (findings - count)) + index), "report #{index}\n")
        end
        store.flush
        writer.write(Marshal.dump(outcomes.tally))
        exit!(0)
      end
      writer.close
      reader
    end
    File.write(start, "")
    readers.map { |reader| Marshal.load(reader.read) }.tap { Process.waitall } # rubocop:disable Security/MarshalLoad
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

  # What a group's input did run alone belongs to that input: recorded
  # only while it is still the group's, forgotten when a smaller one
  # replaces it, kept when a lone run filed it.
  def test_what_an_input_did_alone_belongs_to_that_input
    in_tmpdir do |dir|
      identity = Identity.of_report(TIMEOUT)
      store = Store.new(dir)
      store.record(identity, "HANGHANG", "report\n")
      refute store.note_alone(identity.group, "passes", 4), "another input's check"
      assert store.note_alone(identity.group, "passes", 8)
      assert_equal "passes", Store.new(dir).named(identity.group).alone
      store.record(identity, "HANG", "report\n")
      assert_nil Store.new(dir).named(identity.group).alone
      store.record(identity, "HAN", "report\n", alone: "fails")
      assert_equal "fails", Store.new(dir).named(identity.group).alone
    end
  end

  # A bug detector's finding is named by the user's frame that made the
  # dangerous call: two SQL injections in two controllers reach SQLite
  # through the same library frames, and are two groups.
  def test_a_detector_finding_is_named_by_the_user_code_that_called_the_sink
    require "ruzzy/detectors"
    library = ["/usr/lib/ruby/vendor_ruby/sqlite3/database.rb:147:in `new'",
               "/usr/lib/ruby/vendor_ruby/sqlite3/database.rb:147:in `prepare'",
               "/usr/share/gems/activerecord/lib/active_record/querying.rb:9:in `find_by_sql'",
               "/usr/share/gems/activerecord/lib/active_record/relation.rb:20:in `load'"]
    reports = %w[members tasks].map do |controller|
      error = Ruzzy::Detectors::SQLInjection.new("SQL injection: ...", "SQLite3::Statement.new")
      error.set_backtrace([*library, "/srv/app/app/controllers/#{controller}_controller.rb:12:in `index'",
                           "/srv/app/config.ru:3:in `call'"])
      error
    end
    tokens = -> { reports.map { |error| Ruzzy::Findings::Report.dedup_token(error) } }
    assert_equal 1, tokens.call.uniq.size, "without a user's directory, the innermost frames name it"
    saved = %i[@harness_dir @include @roots @cache].to_h { |name| [name, Ruzzy::UserCode.instance_variable_get(name)] }
    begin
      Ruzzy::UserCode.watch("/srv/app/config.ru", libraries: false)
      assert_equal ["Ruzzy::Detectors::SQLInjection--members_controller.rb:index--config.ru:call",
                    "Ruzzy::Detectors::SQLInjection--tasks_controller.rb:index--config.ru:call"], tokens.call
      text = "#{Ruzzy::Findings::Report.describe_exception(reports.last)}DEDUP_TOKEN: #{tokens.call.last}\n"
      identity = Ruzzy::Findings::Identity.of_report(text)
      assert_equal "tasks_controller.rb:12", identity.site
    ensure
      saved.each { |name, value| Ruzzy::UserCode.instance_variable_set(name, value) }
    end
  end

  # Where a Ruby exception is caught its Outcome is built once and groups
  # it; its printed report, read back in another process (a replay, `ruzzy
  # findings minimise`), names the same kind, token, title and site.
  def test_an_outcome_is_named_as_its_report_read_back
    require "ruzzy/detectors"
    caught = lambda do |&block|
      block.call
    rescue Exception => e # rubocop:disable Lint/RescueException -- any exception a target may raise
      e
    end
    caused = caught.call do
      raise KeyError, "inner"
    rescue KeyError
      raise ArgumentError, "outer\nsecond line"
    end
    detector = Ruzzy::Detectors::SQLInjection.new("SQL injection: ...", "SQLite3::Statement.new")
    detector.set_backtrace(["/srv/app/members_controller.rb:12:in `index'", "/srv/app/config.ru:3:in `call'"])
    errors = [caught.call { raise "bad header" }, caused, caught.call { raise TypeError, "" }, detector,
              caught.call { assert_equal 1, 2 }]
    errors.each do |error|
      text, outcome = Ruzzy::Findings::Report.describe(error, "input")
      assert_equal Identity.of_report(text).to_a, outcome.identity.to_a, text
      assert_equal "input", outcome.input
    end
    kinds = errors.map { |error| Ruzzy::Findings::Report.describe(error, "x").last.kind }
    assert_equal %w[exception exception exception detector exception], kinds
  end

  # A non-local exit (a throw out of the target) has no exception: its
  # title is the line after its headline, the input's description.
  def test_a_non_local_exits_outcome_is_named_as_its_report_read_back
    [nil, ->(input, _) { "the requests of #{input}\nsecond line\n" }].each do |description|
      context = Ruzzy::Findings::Context::NONE.dup
      context.input_description = description
      Ruzzy::Findings.context = context
      text, outcome = Ruzzy::Findings::Report.describe(:thrown, "input")
      assert_equal Identity.of_report(text).to_a, outcome.identity.to_a, text
    end
  ensure
    Ruzzy::Findings.context = nil
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/libfuzzer_args"

# Quiet coverage (ext/ruzzy/src/coverage/quiet.rs): the coverage events of
# a method that finds nothing new are switched off between inputs and on
# again in a window; other TracePoints keep working; something else
# switching coverage back on is noticed; switching in a loop with threads
# and GC.compact neither crashes nor changes what the code computes.
class TestQuietCoverage < Minitest::Test
  TARGET = <<~RUBY
    module Target
      def self.busy(x)
        if x > 5
          x.even? ? :big_even : :big_odd
        else
          x.zero? ? :zero : :small
        end
      end

      def self.rare(x) = x == 7 ? :seven : :other

      def self.blocky(list) = list.map { |x| x.odd? ? x * 3 : x / 2 }.sum

      def self.fresh(x) = x.positive? ? :pos : :neg

      def self.armed(x)
        if x == 42
          y = x * 2
          y.to_s
        else
          :other
        end
      end
    end
  RUBY

  PRELUDE = <<~RUBY
    require "ruzzy"
    Ruzzy::Coverage.start
    require_relative "target"
    def hits(&)
      Ruzzy::Native._clear_counters
      yield
      Ruzzy::Native._counters_hit.size
    end
    def quiet_info = Ruzzy::Coverage.info.select { |key, _| key.to_s.start_with?("quiet_") }
    10.times { |i| Target.busy(i); Target.rare(i); Target.blocky([i, i + 1]); Target.armed(i) }
    on = Ruzzy::Coverage.quiet(10)
  RUBY

  def run_script(body, env: {})
    in_tmpdir do |dir|
      File.write(File.join(dir, "target.rb"), TARGET)
      File.write(File.join(dir, "script.rb"), PRELUDE + body)
      result = ruby("script.rb", chdir: dir, env:)
      assert_exit 0, result
      yield result.stdout.lines.to_h { |line| line.split("=", 2).then { |key, value| [key, eval(value)] } } # rubocop:disable Security/Eval -- our own output
    end
  end

  def test_a_quiet_method_stops_counting_and_counts_again_in_a_window
    run_script(<<~RUBY) do |out|
      puts "on=\#{on.inspect}"
      puts "before=\#{hits { Target.busy(3) }}"
      Ruzzy::Native._quiet_coverage_tick(5_000)
      puts "not_yet=\#{hits { Target.busy(3) }}"
      Ruzzy::Native._quiet_coverage_tick(6_000)
      puts "off=\#{hits { Target.busy(3); Target.busy(8); Target.blocky([1, 2]) }}"
      puts "info_off=\#{quiet_info.inspect}"
      Ruzzy::Native._quiet_coverage_tick(30_000)
      puts "window=\#{hits { Target.busy(3) }}"
      puts "info_window=\#{quiet_info.inspect}"
      Ruzzy::Native._quiet_coverage_tick(3_000)
      puts "after_window=\#{hits { Target.busy(3) }}"
    RUBY
      assert out["on"], "quiet coverage is on with RUBY_VERSION #{RUBY_VERSION}"
      assert_operator out["before"], :>, 0
      assert_equal out["before"], out["not_yet"], "5 s of quiet is not 10"
      assert_equal 0, out["off"], "switched-off methods and blocks reach no counter"
      assert_operator out["info_off"][:quiet_switched_off], :>=, 3
      assert_equal out["info_off"][:quiet_switched_off], out["info_off"][:quiet_iseqs_off]
      assert_equal out["before"], out["window"], "a window counts again"
      assert_equal 0, out["info_window"][:quiet_iseqs_off]
      assert_operator out["info_window"][:quiet_switched_on], :>=, 3
      assert_equal 0, out["after_window"], "quiet again after the window"
      assert_equal 0, out["info_window"][:quiet_failed]
    end
  end

  # Only the instructions whose event fired are switched off: an arm no
  # input ran yet costs nothing while it does not run, and is seen when
  # one does, as in a method switched on (its module's body, switched off
  # in the same batch, rebuilds the method too).
  def test_an_arm_no_input_ran_is_still_seen_in_a_switched_off_method
    run_script(<<~RUBY) do |out|
      Ruzzy::Native._quiet_coverage_tick(11_000)
      puts "off=\#{hits { Target.armed(1) }}"
      puts "new_arm=\#{hits { Target.armed(42) }}"
      puts "info=\#{quiet_info.inspect}"
      Ruzzy::Native._quiet_coverage_tick(11_000)
      puts "quiet_again=\#{hits { Target.armed(42); Target.armed(1) }}"
    RUBY
      assert_equal 0, out["off"], "the arms that ran are switched off"
      assert_operator out["new_arm"], :>, 0, "the arm that never ran is seen"
      assert_operator out["info"][:quiet_arms_kept], :>=, 2
      assert_equal 0, out["quiet_again"], "and switched off with the rest once quiet"
    end
  end

  # A comparison site counts as coverage of its method: off with the
  # method's events, on again in a window. Its operands are still reported
  # (see the campaign test below).
  def test_a_switched_off_method_counts_no_comparison_site
    run_script(<<~RUBY) do |out|
      Ruzzy::CompareHooks.install
      puts "before=\#{hits { Target.rare(3) }}"
      puts "before_untraced=\#{hits { 3 == 7 }}"
      Ruzzy::Native._quiet_coverage_tick(11_000)
      puts "off=\#{hits { Target.rare(3) }}"
      Ruzzy::Native._quiet_coverage_tick(30_000)
      puts "window=\#{hits { Target.rare(3) }}"
    RUBY
      assert_operator out["before"], :>=, 2, "the arm and the comparison site `x == 7`"
      assert_equal 0, out["off"], "a switched-off method's comparison site reaches no counter"
      assert_equal out["before"], out["window"], "and counts again in a window"
    end
  end

  def test_a_method_that_finds_something_new_stays_on
    run_script(<<~RUBY) do |out|
      Ruzzy::Native._quiet_coverage_tick(11_000)
      Ruzzy::Native._quiet_coverage_tick(30_000) # a window: all on for 3 s
      Target.busy(-1) # nothing new
      Target.rare(3)
      Target.fresh(1) # first called now: new counters
      Ruzzy::Native._quiet_coverage_tick(4_000) # the window is over
      puts "busy=\#{hits { Target.busy(3) }}"
      puts "fresh=\#{hits { Target.fresh(2) }}"
    RUBY
      assert_equal 0, out["busy"]
      assert_operator out["fresh"], :>, 0, "a method with new counters 4 s ago keeps counting"
    end
  end

  # Where the branch events take too small a share of the time to say
  # (the probe sets what each of a trial's measures reads, ns an input),
  # switching off is a trial: the quiet methods stay off when an input took
  # a tenth less time with them off than with them on around it; else they
  # are on again, and the next trial waits 30 s.
  def test_switching_off_stays_only_where_a_trial_measured_it_to_pay
    run_script(<<~RUBY) do |out|
      probe = ->(ns, ms) { Ruzzy::Native._quiet_coverage_probe_cost(ns); Ruzzy::Native._quiet_coverage_tick(ms) }
      probe.call(1000, 11_000) # quiet: the trial starts (on: 1000 ns an input)
      puts "in_trial=\#{hits { Target.busy(3) }}"
      probe.call(950, 500) # off: 950 ns
      puts "on_again=\#{hits { Target.busy(3) }}"
      probe.call(1000, 500)
      puts "off_again=\#{hits { Target.busy(3) }}"
      2.times { probe.call(950, 500); probe.call(1000, 500) } # 5% saved
      puts "after_trial=\#{hits { Target.busy(3) }}"
      puts "info_little=\#{quiet_info.inspect}"
      probe.call(1000, 20_000)
      puts "waiting=\#{hits { Target.busy(3) }}"
      probe.call(1000, 11_000) # 32 s later: a second trial
      puts "second_trial=\#{hits { Target.busy(3) }}"
      # 30% saved, though one measure off was slow (a collection)
      [700, 2000, 700].each { |off| probe.call(off, 500); probe.call(1000, 500) }
      puts "paid=\#{hits { Target.busy(3) }}"
      puts "info_paid=\#{quiet_info.inspect}"
    RUBY
      assert_equal 0, out["in_trial"], "switched off for the trial"
      assert_operator out["on_again"], :>, 0, "on again to measure"
      assert_equal 0, out["off_again"]
      assert_operator out["after_trial"], :>, 0, "5% saved is not worth it"
      assert_equal [1, 5.0, 0], out["info_little"].values_at(:quiet_trials, :quiet_trial_saving, :quiet_iseqs_off)
      assert_operator out["waiting"], :>, 0, "no trial within 30 s of the last"
      assert_equal 0, out["second_trial"]
      assert_equal 0, out["paid"], "30% saved: they stay off"
      assert_equal [2, 30.0], out["info_paid"].values_at(:quiet_trials, :quiet_trial_saving)
      assert_operator out["info_paid"][:quiet_iseqs_off], :>=, 3
    end
  end

  # Under YJIT: switching throws YJIT's code away; on Ruby 3.1, whose
  # YJIT would not compile those methods again, their call counts are reset
  # (3.3 and 3.4 do it themselves), and a window, whose switching on also
  # throws the compiled code away, counts what compiled code runs. Without
  # YJIT (`--yjit` only warns on a Ruby built without it) the same holds.
  def test_under_yjit_switched_methods_are_compiled_again_and_a_window_counts
    run_script(<<~RUBY, env: { "RUBYOPT" => "--yjit" }) do |out|
      yjit = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? true : false
      iseq = RubyVM::InstructionSequence.of(Target.method(:busy))
      50.times { |i| Target.public_send(:busy, i) }
      puts "yjit=\#{yjit}"
      puts "calls_before=\#{Ruzzy::Native._jit_calls(iseq).inspect}"
      Ruzzy::Native._quiet_coverage_tick(11_000)
      puts "calls_after=\#{Ruzzy::Native._jit_calls(iseq).inspect}"
      puts "off=\#{hits { 50.times { |i| Target.public_send(:busy, i) } }}"
      Ruzzy::Native._quiet_coverage_tick(30_000)
      puts "window=\#{hits { Target.busy(3) }}"
    RUBY
      assert_equal 0, out["off"]
      assert_operator out["window"], :>, 0, "a window counts what compiled code ran"
      if out["yjit"] && RUBY_VERSION < "3.2"
        assert_operator out["calls_before"], :>=, 50
        assert_equal 0, out["calls_after"], "the call count is reset for YJIT to compile again"
      elsif RUBY_VERSION >= "3.2"
        assert_nil out["calls_after"], "Ruby 3.3 and later reset YJIT's call counts themselves"
      end
    end
  end

  TRACEPOINTS = <<~RUBY
    Ruzzy::Native._quiet_coverage_tick(11_000)
    off = quiet_info[:quiet_iseqs_off]
    lines = 0
    point = TracePoint.new(:line) { lines += 1 }
    point.enable(target: Target.method(:busy)) { Target.busy(3) }
    puts "targeted_lines=\#{lines}"
    puts "still_off=\#{quiet_info[:quiet_iseqs_off] == off}"
    puts "after_targeted=\#{hits { Target.busy(3) }}"
    # A global line TracePoint, the first: Ruby recompiles every iseq with
    # every event enabled so far, the coverage events too.
    global_lines = 0
    global = TracePoint.new(:line) { global_lines += 1 }
    global.enable
    on_again = hits { Target.busy(3) }
    global.disable
    puts "on_again=\#{on_again}"
    puts "global_lines=\#{global_lines}"
    puts "info=\#{quiet_info.inspect}"
    Ruzzy::Native._quiet_coverage_tick(11_000)
    puts "off_again=\#{hits { Target.busy(3) }}"
    calls = []
    call_point = TracePoint.new(:call) { |tp| calls << tp.method_id }
    call_point.enable { Target.rare(1) }
    puts "calls=\#{calls.inspect}"
  RUBY

  def test_other_tracepoints_keep_working_and_coverage_switched_on_elsewhere_is_noticed
    run_script(TRACEPOINTS) do |out|
      assert_operator out["targeted_lines"], :>, 0, "a targeted TracePoint fires in a switched-off method"
      assert out["still_off"], "a targeted TracePoint does not switch coverage on"
      assert_equal 0, out["after_targeted"]
      assert_operator out["global_lines"], :>, 0
      assert_operator out["on_again"], :>, 0, "a global TracePoint switched coverage on again"
      assert_operator out["info"][:quiet_on_elsewhere], :>=, 1, "and ruzzy noticed"
      assert_equal 0, out["off_again"], "then switched it off again once quiet"
      assert_equal [:rare], out["calls"], "a global TracePoint fires in a switched-off method"
    end
  end

  SWITCHING_LOOP = <<~RUBY
    expected = ->(x) { x > 5 ? (x.even? ? :big_even : :big_odd) : (x.zero? ? :zero : :small) }
    stop = false
    wrong = Queue.new
    threads = 3.times.map do |t|
      Thread.new do
        i = t
        until stop
          x = i % 13
          wrong << [x, Target.busy(x)] unless Target.busy(x) == expected.(x)
          wrong << [:blocky, x] unless Target.blocky([x, x + 1]) == [x, x + 1].sum { |y| y.odd? ? y * 3 : y / 2 }
          Target.rare(x)
          i += 1
          Thread.pass if i % 50 == 0
        end
      end
    end
    60.times do |round|
      Ruzzy::Native._quiet_coverage_tick(round.even? ? 11_000 : 500_000)
      GC.compact if round % 6 == 0 && GC.respond_to?(:compact)
      GC.start if round % 6 == 3
      Target.blocky((0..round).to_a)
      sleep 0.005
    end
    stop = true
    threads.each(&:join)
    puts "wrong=\#{wrong.size}"
    puts "info=\#{quiet_info.inspect}"
  RUBY

  def test_switching_in_a_loop_with_threads_and_compaction
    run_script(SWITCHING_LOOP) do |out|
      assert_equal 0, out["wrong"]
      assert_operator out["info"][:quiet_switched_off], :>, 10
      assert_operator out["info"][:quiet_switched_on], :>, 10
      assert_equal 0, out["info"][:quiet_failed]
    end
  end

  def test_public_api_locations_keep_every_event_on_and_say_why
    in_tmpdir do |dir|
      File.write(File.join(dir, "target.rb"), TARGET)
      File.write(File.join(dir, "script.rb"), "#{PRELUDE}puts on.inspect\n")
      result = ruby("script.rb", chdir: dir, env: { "RUZZY_LOCATIONS" => "public" })
      assert_exit 0, result
      assert_equal "false\n", result.stdout
      assert_match(/INFO: ruzzy: quiet coverage unavailable \(coverage locations come from the public API\): every /,
                   result.stderr)
    end
  end

  def test_libfuzzer_steps_that_read_coverage_as_a_fact_keep_every_event_on
    assert Ruzzy::LibFuzzerArgs.new(%w[ruzzy -merge_control_file=/tmp/m -merge_inner=1 a b]).reads_coverage?
    assert Ruzzy::LibFuzzerArgs.new(%w[ruzzy -minimize_crash_internal_step=1 crash]).reads_coverage?
    refute Ruzzy::LibFuzzerArgs.new(%w[ruzzy -runs=10 -print_final_stats=1 corpus]).reads_coverage?
  end

  # A magic number compared in a method switched off after the first
  # inputs (the probe switches at once, whatever the share): the method
  # reaches no counter, yet its comparison is still reported, and libFuzzer
  # solves it as with every event on.
  MAGIC = <<~RUBY
    module Magic
      NUMBER = 0x2F76_E57F * 2 # not a literal of the dictionary

      def self.check(data)
        return :short if data.bytesize < 4

        raise "magic number" if data.unpack1("N") == NUMBER

        :other
      end
    end
  RUBY

  def test_a_switched_off_method_still_reports_its_comparisons
    in_tmpdir do |dir|
      File.write(File.join(dir, "magic.rb"), MAGIC)
      harness = write_harness(dir, <<~RUBY)
        require_relative "magic"
        inputs = 0
        Ruzzy.fuzz(lambda do |data|
          Magic.check(data)
          if (inputs += 1) == 3
            Ruzzy::Native._quiet_coverage_probe_cost(0)
            Ruzzy::Native._quiet_coverage_tick(1_000)
            File.write("off.txt", Ruzzy::Coverage.info[:quiet_iseqs_off])
          end
          nil
        end)
      RUBY
      env = { "RUZZY_QUIET_COVERAGE" => "0.1", "RUZZY_TEST_PROBES" => "1" }
      blind = ruzzy("--no-compare-hooks", harness, "-runs=200000", "-seed=1", chdir: dir, env:)
      assert_exit 0, blind # premise: without the comparison reports the number is out of reach
      result = ruzzy(harness, "-runs=200000", "-seed=1", chdir: dir, env:)
      assert_operator Integer(File.read(File.join(dir, "off.txt"))), :>=, 1, "Magic.check switched off"
      assert_match(/RuntimeError: magic number/, result.output)
      refute_empty artifacts(dir)
    end
  end

  # Calls Target.busy REPEAT times an input, and sleeps PAUSE seconds (work
  # outside the instrumented code, as a web framework's).
  REPEATING_HARNESS = <<~RUBY
    require_relative "target"
    count = 0
    repeat = Integer(ENV.fetch("REPEAT"))
    pause = Float(ENV.fetch("PAUSE", "0"))
    Ruzzy.fuzz(lambda do |data|
      x = data.bytesize
      repeat.times do
        raise "wrong" unless Target.busy(x) == (x > 5 ? (x.even? ? :big_even : :big_odd) : (x.zero? ? :zero : :small))
      end
      Target.rare(x)
      Target.blocky(data.bytes.first(4))
      sleep(pause) if pause.positive?
      GC.compact if (count += 1) % 5000 == 0 && GC.respond_to?(:compact)
      File.write("info.txt", Ruzzy::Coverage.info.inspect) if count % 1000 == 0
      nil
    end)
  RUBY

  # A fuzzing run whose methods go quiet within a second: no crash, no
  # finding, methods switched off where branch events take a share of the
  # time worth saving (100 calls an input), none where they do not (one
  # call among 0.5 ms of other work: a trial measures that switching them
  # off saves next to nothing, and switches them on again);
  # --no-quiet-coverage keeps them on, as does the default. A trial takes
  # 3.5 s of the clock (7 measures of 0.5 s) after the first 0.5 s quiet:
  # 12 s leave it room on a busy machine (5 s did not, with 3 processes on
  # 2 cores).
  def test_fuzzing_with_a_short_quiet_time
    in_tmpdir do |dir|
      File.write(File.join(dir, "target.rb"), TARGET)
      harness = write_harness(dir, REPEATING_HARNESS)
      infos = [[1, "0.0005"], [100, "0"]].to_h do |repeat, pause|
        env = { "RUZZY_QUIET_COVERAGE" => "0.5", "REPEAT" => repeat.to_s, "PAUSE" => pause }
        result = ruzzy(harness, "-max_total_time=12", "-seed=1", chdir: dir, env:)
        assert_exit 0, result
        assert_match(/INFO: ruzzy: quiet coverage: .* 0.5 s/, result.output)
        assert_empty artifacts(dir)
        [repeat, eval(File.read(File.join(dir, "info.txt")))] # rubocop:disable Security/Eval -- our own output
      end
      assert_operator infos[100][:quiet_switched_off], :>=, 2, infos[100].inspect
      assert_operator infos[1][:quiet_event_share], :<, 3, infos[1].inspect
      assert_operator infos[1][:quiet_trials], :>=, 1, "too few events to say: measured #{infos[1].inspect}"
      assert_operator infos[1][:quiet_trial_saving], :<, 10, infos[1].inspect
      assert_equal 0, infos[1][:quiet_iseqs_off], "not worth switching: #{infos[1].inspect}"

      env = { "RUZZY_QUIET_COVERAGE" => "0.5", "REPEAT" => "1" }
      off = ruzzy("--no-quiet-coverage", harness, "-runs=2000", chdir: dir, env:)
      assert_exit 0, off
      refute_match(/quiet coverage/, off.output)
      # Off by default; --quiet-coverage turns it on with 10 s.
      refute_match(/quiet coverage/, ruzzy(harness, "-runs=100", chdir: dir, env: { "REPEAT" => "1" }).output)
      on = ruzzy("--quiet-coverage", harness, "-runs=100", chdir: dir, env: { "REPEAT" => "1" })
      assert_match(/INFO: ruzzy: quiet coverage: .* 10 s/, on.output)
    end
  end
end

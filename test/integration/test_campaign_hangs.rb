# frozen_string_literal: true

require_relative "../test_helper"

# Hangs in campaigns (`ruzzy --keep-going`, docs/campaigns.md): a hang
# in Ruby code is stopped in the worker and checked alone, one in C code
# ends the worker; each is one group, named by its loop, however it was
# stopped. (Beside test_campaign.rb: these wait on hang thresholds, and two
# files run at once.)
class TestCampaignHangs < Minitest::Test
  # A hang in Ruby code is stopped in the worker (the input's frames make
  # the report) and fuzzing goes on in the same process.
  def test_a_hang_in_ruby_code_is_recorded_and_the_worker_goes_on
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda do |data|
          loop { data.hash } if data.start_with?("H")
          raise IndexError, "after the hang" if data.start_with?("I")
          nil
        end)
      RUBY
      # The watch stops the hang after 1.5 s, before libFuzzer's timeout
      # (2 s) ends the worker: on Ruby 3.3 and 3.4 it could not, when the
      # fuzzing thread kept the GVL for Ruby's default time slice.
      result = ruzzy("--keep-going", "--workers=2", "harness.rb", "-seed=1", "-timeout=2", "-max_total_time=15",
                     chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal %w[exception timeout], groups.map { |group| group[:kind] }.sort, result.stderr
      hang = groups.find { |group| group[:kind] == "timeout" }
      assert_operator hang[:seconds], :>=, 2, "it ran over the threshold alone"
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_match(/^==ruzzy== suspected hang #{hang[:name]} /, log)
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_equal 2, log.scan(/^==> worker \d+:/).size,
                   "the same two workers all along:\n#{log.lines.grep(/^(==>|<==) worker/).join}"
      reached = /^==ruzzy== reached: [1-9]\d* lines and [1-9]\d* edges of your code, \d+ lines in all; [1-9]\d* inputs/
      assert_match(reached, log)
      status = %r{^\[00:00:1\d\] [\d,]+ execs \([\d,]+/s\)  yours [1-9]\d* lines [1-9][\d,]* edges, all [\d,]+ lines }
      assert_match(status, result.stderr,
                   "the status line counts the lines reached")
      assert_match(/ERROR: libFuzzer: timeout after 1\.5 seconds \(stopped in Ruby code; fuzzing goes on\)/, log)
    end
  end

  # The hang of the first campaign (first_spin, timed into a file) and a
  # new one.
  KNOWN_AND_NEW_HANGS = <<~RUBY
    def first_spin = loop { 1.hash }
    def second_spin = loop { 2.hash }
    Ruzzy.fuzz(lambda do |data|
      first_spin if data.start_with?("H")
      second_spin if data.start_with?("S")
      nil
    ensure
      File.write("first_spin.stops", "\#{$!&.message}\n", mode: "a") if data.start_with?("H")
    end)
  RUBY

  # A campaign that starts with a hang on file (an earlier campaign's, in
  # the same findings directory) gives every input REPEAT_SECONDS from the
  # first one: a new hang is stopped after 0.5 s, not after -timeout less
  # half a second, and filed once it ran over -timeout alone; and an input
  # that stays in the known hang's loop is stopped sooner still
  # (KNOWN_SECONDS, 0.1 s). (The harness writes down the exception that
  # stops it: its limit, not a time measured.)
  def test_a_campaign_with_a_hang_on_file_stops_hangs_soon_from_the_first_input
    in_tmpdir do |dir|
      write_harness(dir, "def first_spin = loop { 1.hash }\n" \
                         "Ruzzy.fuzz(->(data) { first_spin if data.start_with?('H'); nil })")
      first = ruzzy("--keep-going", "--workers=1", "harness.rb", "-seed=1", "-timeout=2", "-max_total_time=4",
                    chdir: dir)
      assert_exit 77, first
      write_harness(dir, KNOWN_AND_NEW_HANGS)
      again = ruzzy("--keep-going", "--workers=1", "harness.rb", "-seed=2", "-timeout=4", "-max_total_time=6",
                    chdir: dir)
      assert_exit 77, again
      groups = list_groups(dir)
      assert_equal 2, groups.size, again.stderr
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_match(/timeout after 1\.5 seconds \(stopped in Ruby code[^=]*first_spin/, log, "the first campaign's")
      assert_match(/timeout after 0\.5 seconds \(stopped in Ruby code[^=]*second_spin/, log, "the new hang")
      stops = File.readlines(File.join(dir, "first_spin.stops"), chomp: true)
      assert_operator stops.size, :>=, 3, "the known hang was met again"
      in_its_loop = stops.count("the fuzz target ran for 0.1 s")
      # A stop on the watch's thread (0.5 s) only if the fuzzing thread got
      # no time for 0.4 s: a quarter of them on a busy machine, at most.
      assert_operator in_its_loop, :>=, stops.size * 3 / 4, "its repeats are stopped in its loop: #{stops.tally}"
    end
  end

  # One loop, slow for some inputs and endless for others. Once the hang
  # is known, an input that passes through the loop is stopped after 0.1 s
  # (KNOWN_SECONDS), but it is not filed: run alone, it finishes. The
  # group keeps the input that runs over the threshold alone, with how long
  # it ran; a replay says it hangs, by the campaign's threshold, and once
  # the loop is fixed, how long the input takes now.
  SLOW_AND_ENDLESS = <<~RUBY
    def step(value) = value + 1

    def spin(seconds)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
      value = 0
      value = step(value) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      value
    end

    Ruzzy.fuzz(lambda do |data|
      spin(data.start_with?("HANG") ? ENDLESS : 0.4) if data.start_with?("H")
      nil
    end)
  RUBY

  def test_an_input_that_passes_through_a_known_slow_loop_but_finishes_is_not_filed
    in_tmpdir do |dir|
      write_harness(dir, "ENDLESS = 1000\n#{SLOW_AND_ENDLESS}")
      FileUtils.mkdir_p(File.join(dir, "corpus"))
      { "slow" => "H", "endless" => "HANG" }.each { |name, input| File.write(File.join(dir, "corpus", name), input) }
      result = ruzzy("--keep-going", "--workers=1", "harness.rb", "corpus", "-seed=1", "-timeout=2",
                     "-max_total_time=12", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal ["timeout"], groups.map { |group| group[:kind] }, result.stderr
      hang = groups.first
      input = File.binread(File.join(dir, "ruzzy-findings", hang[:name], "input"))
      assert input.start_with?("HANG"), "the group keeps an input that hangs, not #{input.inspect}\n#{result.stderr}"
      assert_operator hang[:seconds], :>=, 2, "how long it ran alone"
      assert_match(/^  not a hang: a [1-3]-byte input stopped after [\d.]+ ms finished in [\d.]+ m?s alone /,
                   result.stderr, "an input stopped in the loop was run alone, and finished")

      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_match(/^FAILS +#{hang[:name]} +hangs: ran \d+ s \(the hang threshold is 2 s\)$/, replay.stdout)
      write_harness(dir, "ENDLESS = 0.3\n#{SLOW_AND_ENDLESS}")
      fixed = ruzzy("findings", "replay", chdir: dir)
      assert_exit 0, fixed
      assert_match(/^ok +#{hang[:name]} +now [\d.]+ ms \(was over #{hang[:seconds]} s; the hang threshold is 2 s\)$/,
                   fixed.stdout)
    end
  end

  # A hang in C code never comes back to Ruby: libFuzzer's timeout ends the
  # worker, the supervisor files it and starts the next. The hang is the
  # same group either way.
  def test_a_hang_in_c_code_ends_a_worker_and_the_campaign_goes_on
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          Faults.spin(data)
          raise IndexError, "after the hang" if data.start_with?("I")
          nil
        end)
      RUBY
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-timeout=1", "-max_total_time=20", chdir: dir)
      assert_exit 77, result
      kinds = list_groups(dir).map { |group| group[:kind] }.sort
      assert_equal %w[exception timeout], kinds, result.stderr
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_operator log.scan(/^==> worker \d+:/).size, :>=, 2, "a new worker started after the hang"
    end
  end

  # A hang driven by a count in the input, in a loop that calls several
  # small methods: the watch stops it in whichever it is running, and it
  # is one group, named by the loop, which a replay (libFuzzer's timeout,
  # not the watch) reproduces.
  def test_a_hang_in_a_loop_is_one_group_whichever_method_it_was_stopped_in
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        def step(value) = (value * 31 + 7) & 0xffff
        def mix(value) = value ^ (value >> 3)
        def check(value) = value.even? ? value : value + 1

        def spin(data)
          value = 0
          data.unpack1("N").times do
            value = check(mix(step(value)))
          end
        end

        Ruzzy.fuzz(lambda do |data|
          spin(data) if data.bytesize >= 4 && data.start_with?("H")
          nil
        end)
      RUBY
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-timeout=2", "-max_total_time=20", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal [["timeout", "timeout--timeout--spin@harness.rb--<top>@harness.rb"]],
                   groups.map { |group| group.values_at(:kind, :token) }, result.stderr
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_operator log.scan(/^==ruzzy== suspected hang #{groups.first[:name]} /).size, :>=, 1, log
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_match(/^FAILS +timeout-\h{10} +hangs: ran \d+ s \(the hang threshold is 2 s\)$/, replay.stdout)
    end
  end

  # `ruzzy findings minimise` of a hang given a -timeout shorter than the
  # campaign's hang threshold (docs/campaigns.md suggests it when the hang
  # shows sooner) finds candidates sooner, but an input is the group's, or
  # a new hang, only when it runs past the threshold alone: here an input
  # of 2 to 5 bytes spins for 1.5 s, past the rounds' -timeout of 1 s but
  # within the threshold of 3 s, and one of 6 bytes or more hangs in the
  # same loop. The group keeps a hang; no slow input is filed.
  def test_minimising_a_hang_with_a_shorter_timeout_keeps_an_input_that_hangs
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        def spin(seconds)
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
          loop { break if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline }
        end

        Ruzzy.fuzz(lambda do |data|
          spin(data.bytesize >= 6 ? 1000 : 1.5) if data.bytesize >= 2 && data.start_with?("H")
          nil
        end)
      RUBY
      FileUtils.mkdir_p(File.join(dir, "corpus"))
      File.write(File.join(dir, "corpus", "hang"), "H" * 12)
      campaign = ruzzy("--keep-going", "--workers=1", "harness.rb", "corpus", "-runs=1", "-timeout=3", chdir: dir)
      assert_exit 77, campaign
      hang = list_groups(dir).find { |group| group[:kind] == "timeout" }
      refute_nil hang, campaign.stderr
      minimised = ruzzy("findings", "minimise", hang[:name], "-timeout=1", "-max_total_time=12", "-seed=1",
                        chdir: dir)
      assert_exit 0, minimised
      input = File.binread(File.join(dir, "ruzzy-findings", hang[:name], "input"))
      assert input.start_with?("H") && input.bytesize >= 6, "a hang, not a slow input: #{input.inspect}\n" \
                                                            "#{minimised.stdout}"
      assert_equal [hang[:name]], list_groups(dir).map { |group| group[:name] }, minimised.stdout
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_match(/^FAILS +#{hang[:name]} +hangs: /, replay.stdout)
    end
  end

  # One loop, each of whose turns holds Ruby's lock in C for a while (the
  # hang watch's thread waits for it): with turns of 0.7 s, libFuzzer's
  # alarm comes before the watch has followed the input, with turns of
  # 0.2 s the watch follows it in time. Either way the hang is named by its
  # loop, in the campaign and when replayed, never by the method the alarm
  # interrupted; replayed, each input hangs as its group says.
  def test_a_loop_stopped_by_the_alarm_or_by_the_watch_is_one_group
    in_tmpdir do |dir|
      build_plain_extension(dir, File.join(FIXTURES, "c_ext", "hold.c"))
      write_harness(dir, <<~RUBY)
        require_relative "hold"
        def turn(seconds) = Hold.hold(seconds)
        def spin(seconds) = loop { turn(seconds) }

        Ruzzy.fuzz(lambda do |data|
          spin(data.start_with?("A") ? 0.7 : 0.2) if data.start_with?("A", "W")
          nil
        end)
      RUBY
      groups = { "alarm" => "A", "watch" => "W" }.map do |name, input|
        corpus = File.join(dir, name)
        FileUtils.mkdir_p(corpus)
        File.write(File.join(corpus, "hang"), input)
        findings = "#{name}-findings"
        result = ruzzy("--keep-going", "--workers=1", "--findings=#{findings}", "harness.rb", name, "-runs=1",
                       "-timeout=2", chdir: dir)
        assert_exit 77, result
        replay = ruzzy("findings", findings, "replay", chdir: dir)
        assert_exit 77, replay
        assert_match(/^FAILS +timeout-\h+ +hangs: /, replay.stdout, "#{name}: the replay names it alike")
        list_groups(dir, findings).map { |group| group[:token] }
      end
      assert_equal [["timeout--timeout--spin@harness.rb--<top>@harness.rb"]], groups.uniq, groups.inspect
    end
  end

  # Unbounded mutual recursion overflows in either method: one group.
  def test_unbounded_recursion_is_one_group_wherever_the_stack_ran_out
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        def list(data, depth) = depth.zero? ? 0 : item(data, depth - 1) + 1
        def item(data, depth) = list(data, depth) + 1

        Ruzzy.fuzz(lambda do |data|
          if data.bytesize >= 2 && data.getbyte(0) == 0x5b
            depth = data.getbyte(1) * 1000
            data.getbyte(1).odd? ? list(data, depth) : item(data, depth)
          end
          nil
        end)
      RUBY
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-max_total_time=15", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal [["SystemStackError: stack level too deep",
                     "exception--SystemStackError--harness.rb:item--harness.rb:list"]],
                   groups.map { |group| group.values_at(:title, :token) }, result.stderr
      assert_operator groups.first[:findings], :>=, 10
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# Campaigns (`ruzzy --keep-going`, docs/campaigns.md): every finding is
# recorded, grouped, and the run goes on; `ruzzy findings` lists, shows,
# replays and minimises the groups.
class TestCampaign < Minitest::Test
  # Two bugs in two methods, each reached by one first byte, and a
  # KeyError that needs a longer input (for minimising).
  TWO_BUGS = <<~RUBY
    def header(data) = data.getbyte(0) == 1 && raise(TypeError, "bad header")
    def body(data) = data.getbyte(0) == 2 && raise(RangeError, "bad body")
    Ruzzy.fuzz(lambda do |data|
      header(data)
      body(data)
      raise KeyError, "bad key" if data.start_with?("KEY") && data.bytesize > 6
      nil
    end)
  RUBY

  def test_keep_going_records_every_exception_grouped_and_exits_77_at_the_end
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal %w[exception exception exception], groups.map { |group| group[:kind] }, result.stderr
      titles = groups.map { |group| group[:title] }.sort
      assert_equal ["KeyError: bad key", "RangeError: bad body", "TypeError: bad header"], titles
      assert(groups.any? { |group| group[:findings] > 1 }, "fuzzing went on after the first finding")
      assert_match(%r{ruzzy: \d+ finding\(s\) in 3 group\(s\), in ruzzy-findings/}, result.stderr)
      assert_match(/NEW  exception-\h{10} \(exception\): TypeError: bad header/, result.stderr)
      assert_empty artifacts(dir), "no crash file outside the findings directory"
      assert File.directory?(File.join(dir, "ruzzy-findings", "corpus")), "a corpus kept for the next worker"
    end
  end

  def test_findings_replays_shows_and_minimises_the_groups
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      assert_exit 77, ruzzy("--findings=found", "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir)
      replay = ruzzy("findings", "found", "replay", chdir: dir)
      assert_exit 77, replay
      assert_equal 3, replay.stdout.scan(/^FAILS .* reproduced$/).size, replay.stdout

      key = list_groups(dir, "found").find { |group| group[:title].start_with?("KeyError") }
      shown = ruzzy("findings", "found", "show", key[:name][0, 14], chdir: dir)
      assert_exit 0, shown
      assert_match(/DEDUP_TOKEN: KeyError--harness\.rb:<top>/, shown.stdout)
      assert_match(%r{^Reproduce: .*ruzzy .*harness\.rb .*found/#{key[:name]}/input$}, shown.stdout)

      minimised = ruzzy("findings", "found", "minimise", key[:name], "-runs=#{runs(2000)}", chdir: dir)
      assert_exit 0, minimised
      input = File.binread(File.join(dir, "found", key[:name], "input"))
      assert_equal 7, input.bytesize, minimised.stdout
      assert input.start_with?("KEY")
    end
  end

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
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-timeout=2", "-max_total_time=15", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal %w[exception timeout], groups.map { |group| group[:kind] }.sort, result.stderr
      assert_operator groups.find { |group| group[:kind] == "timeout" }[:findings], :>=, 2, "found again, sooner"
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      assert_equal 1, log.scan(/^==> worker \d+:/).size, "one worker all along"
      assert_match(/^==ruzzy== reached: [1-9]\d* lines and [1-9]\d* edges of your code, \d+ lines in all$/, log)
      status = %r{^\[00:00:1\d\] [\d,]+ execs \([\d,]+/s\)  yours [1-9]\d* lines [1-9][\d,]* edges, all [\d,]+ lines }
      assert_match(status, result.stderr,
                   "the status line counts the lines reached")
      assert_match(/ERROR: libFuzzer: timeout after 1\.5 seconds \(stopped in Ruby code; fuzzing goes on\)/, log)
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
      assert_operator groups.first[:findings], :>=, 3, "stopped again and again, in different methods"
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_match(/^FAILS +timeout-\h{10} +reproduced$/, replay.stdout)
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

  # Failed assertions of a typed target: a group per violation, whatever
  # values its message quotes; each group's title, report and input are
  # those of one finding.
  def test_each_failed_assertion_is_its_own_group_whatever_its_values
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        require "minitest"

        class Checks
          include Minitest::Assertions
          attr_accessor :assertions

          def initialize = @assertions = 0
        end
        CHECKS = Checks.new

        Ruzzy.fuzz(lambda { |text|
          CHECKS.assert(text.length < 6, "#{text.inspect} has #{text.length} characters")
          CHECKS.assert(!text.include?("B"), "B at #{text.index("B")} of #{text.length}")
        }, Ruzzy::Gen.string(max_length: 16))
      RUBY
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-max_total_time=15", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir).sort_by { |group| group[:token] }
      assert_equal ["exception--Minitest::Assertion--harness.rb:<top>--B at N of N",
                    "exception--Minitest::Assertion--harness.rb:<top>--S has N characters"],
                   groups.map { |group| group[:token] }, result.stderr
      groups.each do |group|
        assert_operator group[:findings], :>=, 3, "found again with other values"
        report = File.read(File.join(dir, "ruzzy-findings", group[:name], "report.txt"))
        assert_includes report, group[:title].delete_suffix("..."), "the title is that of the kept input's finding"
      end
    end
  end

  def test_a_harness_that_cannot_load_ends_the_campaign_with_its_error
    in_tmpdir do |dir|
      write_harness(dir, "raise 'no config'")
      result = ruzzy("--keep-going", "harness.rb", "-max_total_time=30", chdir: dir)
      assert_exit 1, result
      assert_match(/a worker ended with status 1 without a finding; it printed:/, result.stderr)
      assert_match(/RuntimeError: no config/, result.stderr)
    end
  end

  def test_keep_going_needs_corpus_directories_and_a_harness
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      File.write(File.join(dir, "input"), "x")
      assert_match(/--keep-going takes corpus directories, not input files/,
                   ruzzy("--keep-going", "harness.rb", "input", chdir: dir).tap { |r| assert_exit 2, r }.stderr)
      assert_match(/no findings directory nowhere/,
                   ruzzy("findings", "nowhere", chdir: dir).tap { |r| assert_exit 2, r }.stderr)
    end
  end

  private

  def list_groups(dir, findings = "ruzzy-findings")
    Dir.glob(File.join(dir, findings, "*", "group.json")).map do |path|
      JSON.parse(File.read(path), symbolize_names: true).merge(name: File.basename(File.dirname(path)))
    end
  end
end

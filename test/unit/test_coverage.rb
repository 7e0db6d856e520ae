# frozen_string_literal: true

require_relative "../test_helper"

# Ruby coverage: locations that tell branches apart, agree across processes
# and survive GC.compact; include/exclude; activation by command or
# Ruzzy.trace; the maze examples are solved.
class TestCoverage < Minitest::Test
  TARGET = <<~RUBY
    module Target
      def self.walk(data)
        kind = data.start_with?("T") ? :t : :other
        if data.bytesize > 3
          data.each_byte { |b| b.odd? ? :odd : :even }
        end
        kind
      end

      def self.arm(flag) = flag ? :yes : :no
    end
  RUBY

  # Prints the counter indices each input reaches, one line per input.
  REPLAY = <<~RUBY
    require "ruzzy"
    Ruzzy::Coverage.start(**eval(ENV.fetch("COVERAGE_OPTIONS", "{}")))
    require_relative "target"
    inputs = ["", "a", "T", "Tabc", "xyz\\x00\\xff", "TTTTTTTT"]
    inputs.each do |input|
      GC.compact if ARGV.include?("--compact")
      Ruzzy::Native._clear_counters
      Target.walk(input.b)
      puts Ruzzy::Native._counters_hit.inspect
    end
    [true, false].each do |flag|
      Ruzzy::Native._clear_counters
      Target.arm(flag)
      puts Ruzzy::Native._counters_hit.inspect
    end
    puts Ruzzy::Coverage.info.inspect
  RUBY

  def replay(dir, *args, options: "{}")
    File.write(File.join(dir, "target.rb"), TARGET)
    File.write(File.join(dir, "replay.rb"), REPLAY)
    result = ruby("replay.rb", *args, chdir: dir, env: { "COVERAGE_OPTIONS" => options })
    assert_exit 0, result
    lines = result.stdout.lines
    [lines[0, 8].map { |line| eval(line) }, eval(lines.last)] # rubocop:disable Security/Eval -- our own output
  end

  def test_same_inputs_give_the_same_counters_in_every_process_and_after_compaction
    in_tmpdir do |dir|
      first, info = replay(dir)
      second, = replay(dir)
      compacted, = replay(dir, "--compact")
      assert_equal first, second
      assert_equal first, compacted
      assert first.all?(&:any?), "some input reached no counter: #{first.inspect}"
      assert_operator first.first(6).uniq.size, :>=, 4, "different inputs should reach different counters"
      assert_equal Ruzzy_largest_fitted_map_size(dir), info[:map_size], "unfitted until fuzzing starts"
      assert info[:fitted]
      assert info[:precise], "this Ruby should use precise (pc-based) locations"
    end
  end

  # A target that runs different code in three threads, which interleave
  # differently every time (each step sleeps a random time, so the OS
  # decides who runs next).
  THREADED = <<~RUBY
    module Threaded
      def self.north(n) = n.even? ? :even : :odd
      def self.south(n) = n > 100 ? :high : :low
      def self.west(n) = (n % 3).zero? ? :three : :other

      def self.run(data)
        %i[north south west].map do |direction|
          Thread.new do
            data.each_byte { |b| send(direction, b); Thread.pass }
          end
        end.each(&:join)
      end
    end
  RUBY

  THREADED_REPLAY = <<~RUBY
    require "ruzzy"
    Ruzzy::Coverage.start
    require_relative "threaded"
    seen = Array.new(21) do
      Ruzzy::Native._clear_counters
      Threaded.run("abcdefgh\x01\x02".b)
      Ruzzy::Native._counters_hit
    end
    # The first call also reaches each line's one-shot counter.
    seen.shift
    puts seen.map(&:size).min, seen.uniq.size
  RUBY

  # Each thread's edges are its own, so the same input reaches the same
  # counters every time, however the threads interleave (and whichever
  # native thread Ruby reuses for them).
  def test_threads_give_the_same_counters_for_the_same_input
    in_tmpdir do |dir|
      File.write(File.join(dir, "threaded.rb"), THREADED)
      File.write(File.join(dir, "replay.rb"), THREADED_REPLAY)
      result = ruby("replay.rb", chdir: dir)
      assert_exit 0, result
      reached, variants = result.stdout.split.map(&:to_i)
      assert_operator reached, :>, 5, "the threads' code should reach counters"
      assert_equal 1, variants, "the same input reached different counters"
    end
  end

  def test_the_two_arms_of_a_one_line_ternary_differ
    in_tmpdir do |dir|
      counters, = replay(dir)
      yes, no = counters.last(2)
      refute_equal yes, no
    end
  end

  def test_exclude_and_include_patterns
    in_tmpdir do |dir|
      excluded, = replay(dir, options: '{ exclude: ["target.rb"] }')
      assert excluded.all?(&:empty?), excluded.inspect
      included_elsewhere, = replay(dir, options: '{ include: ["/no/such/dir/"] }')
      assert included_elsewhere.all?(&:empty?)
      included, = replay(dir, options: "{ include: [#{dir.inspect}] }")
      assert included.all?(&:any?)
    end
  end

  ONCE = <<~RUBY
    module Once
      def self.straight(data)
        data.bytesize + 1
      end

      def self.branchy(data) = data.empty? ? 0 : 1
    end
  RUBY

  ONCE_REPLAY = <<~RUBY
    require "ruzzy"
    Ruzzy::Coverage.start
    require_relative "once"
    3.times do
      Ruzzy::Native._clear_counters
      Once.straight("abc".b)
      Once.branchy("abc".b)
      puts Ruzzy::Native._counters_hit.inspect
    end
  RUBY

  # Line events fire once per line and process (Ruby's one-shot lines):
  # a method without branches counts the first time it runs; branch events
  # count every time, for their edge and their method.
  def test_lines_count_the_first_time_and_branches_every_time
    in_tmpdir do |dir|
      File.write(File.join(dir, "once.rb"), ONCE)
      File.write(File.join(dir, "replay.rb"), ONCE_REPLAY)
      result = ruby("replay.rb", chdir: dir)
      assert_exit 0, result
      first, second, third = result.stdout.lines.map { |line| eval(line) } # rubocop:disable Security/Eval
      assert_equal 1, (first - second).size, "only the branchless method's counter is first-time only"
      assert_equal 2, second.size, "the branch: its edge and its method"
      assert_equal second, third
    end
  end

  # While fuzzing, Ruby's own Coverage stops counting branches (ruzzy's
  # counters alone see them) when ruzzy set Ruby's coverage up; set up by
  # someone else (SimpleCov, a test), Ruby's counts go on.
  def test_ruby_stops_counting_branches_while_fuzzing_unless_someone_else_counts
    in_tmpdir do |dir|
      File.write(File.join(dir, "branchy.rb"), "def branchy(data)\n  data.size > 3 ? :long : :short\nend\n")
      File.write(File.join(dir, "tracer.rb"), <<~RUBY)
        require "coverage"
        Coverage.start(lines: true, branches: true) if ENV["OTHER_COVERAGE"]
        require "ruzzy"
        Ruzzy.trace("harness.rb")
      RUBY
      write_harness(dir, <<~RUBY)
        require_relative "branchy"
        counts = -> { Coverage.peek_result.fetch(File.expand_path("branchy.rb", __dir__))[:branches].values.sum { |arms| arms.values.sum } }
        seen = []
        Ruzzy.fuzz(lambda do |data|
          branchy(data)
          seen << counts.call
          raise "Ruby's counts: \#{seen.uniq.size}" if seen.size == 5
        end)
      RUBY
      ours = ruby("tracer.rb", "-runs=10", "-seed=1", chdir: dir)
      assert_exit 77, ours
      assert_match(/RuntimeError: Ruby's counts: 1$/, ours.stderr)
      assert_match(/^#\d+\s+(NEW|INITED)/, ours.stderr, "ruzzy's own counters still guide")
      theirs = ruby("tracer.rb", "-runs=10", "-seed=1", chdir: dir, env: { "OTHER_COVERAGE" => "1" })
      assert_exit 77, theirs
      assert_match(/RuntimeError: Ruby's counts: 5$/, theirs.stderr)
    end
  end

  # +code+ lines of constants, +comments+ comment and blank lines.
  def write_code(dir, code:, comments:)
    lines = Array.new(code) { |i| "  X#{i} = #{i}\n" } + Array.new(comments) { |i| i.even? ? "  # note\n" : "\n" }
    File.write(File.join(dir, "big.rb"), "module Big\n#{lines.shuffle(random: Random.new(1)).join}end\n")
    write_harness(dir, "require_relative 'big'\nRuzzy.fuzz(->(data) { data.empty? ? 0 : 0 })")
  end

  def counters_registered(result)
    Integer(result.stderr[/\((\d+) inline 8-bit counters\)/, 1])
  end

  # The map gets two counters per executable line or branch arm of the code
  # loaded when fuzzing starts (a power of two within FITTED_MAP_SIZES);
  # comments and blank lines do not count; --map-size wins.
  def test_the_map_is_fitted_to_the_instrumented_code
    in_tmpdir do |dir|
      write_code(dir, code: 1500, comments: 1000)
      fitted = ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, fitted
      assert_match(/INFO: ruzzy: 4096 edge counters for 15\d\d lines and branch arms of instrumented code/,
                   fitted.stderr)
      assert_equal 4096, counters_registered(fitted)
      assert_equal 1024, counters_registered(ruzzy("--map-size=1000", "harness.rb", "-runs=10", chdir: dir))
      assert_equal 32_768, counters_registered(ruzzy("--map-size=32768", "harness.rb", "-runs=10", chdir: dir))

      write_code(dir, code: 5000, comments: 0)
      assert_equal 16_384, counters_registered(ruzzy("harness.rb", "-runs=10", chdir: dir))
      write_code(dir, code: 10, comments: 0)
      small = ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_equal ruby("-rruzzy", "-e", "print Ruzzy::FITTED_MAP_SIZES.min").stdout.to_i, counters_registered(small)
    end
  end

  # Code compiled before coverage starts is never instrumented, so ruzzy
  # loads no library a harness may fuzz before it: URI, CGI and Find stay
  # unloaded until the harness requires them (`ruzzy HARNESS` and a harness
  # that requires ruzzy and calls Ruzzy.trace), and URI's own lines are
  # then counted (one line was, when the web requests loaded it first).
  def test_libraries_a_harness_fuzzes_are_loaded_by_it_and_instrumented
    in_tmpdir do |dir|
      File.write(File.join(dir, "harness.rb"), <<~RUBY)
        preloaded = %w[uri cgi find].select { |lib| $LOADED_FEATURES.any? { |path| path.end_with?("/\#{lib}.rb") } }
        warn "preloaded: \#{preloaded.inspect}"
        require "uri"
        Ruzzy.fuzz(->(data) { URI.parse(data) rescue nil; nil })
      RUBY
      File.write(File.join(dir, "tracer.rb"), %(require "ruzzy"\nRuzzy.trace("harness.rb")\n))
      [ruzzy("harness.rb", "-runs=10", chdir: dir), ruby("-rruzzy", "tracer.rb", "-runs=10", chdir: dir)].each do |run|
        assert_exit 0, run
        assert_includes run.stderr, "preloaded: []\n"
        lines = run.stderr[/edge counters for (\d+) lines and branch arms/, 1].to_i
        assert_operator lines, :>, 1000, run.stderr
      end
    end
  end

  def test_map_size_is_configurable
    in_tmpdir do |dir|
      _, info = replay(dir, options: "{ map_size: 1000 }")
      assert_equal 1024, info[:map_size]
      refute info[:fitted], "a chosen size is never refitted"
    end
  end

  def test_counters_are_described_as_ruby_locations
    in_tmpdir do |dir|
      result = ruzzy(File.join(EXAMPLES, "maze.rb"), "-seed=1", "-runs=2000", "-print_pcs=1", chdir: dir)
      assert_exit 0, result
      assert_match(%r{NEW_PC: 0x\h+ in ruby .*/examples/maze\.rb:\d+}, result.stderr)
    end
  end

  def test_no_coverage_option_fuzzes_blind
    in_tmpdir do |dir|
      result = ruzzy("--no-coverage", File.join(EXAMPLES, "maze.rb"), "-seed=1", "-runs=2000", chdir: dir)
      assert_exit 0, result
      refute_match(/inline 8-bit counters/, result.stderr)
    end
  end

  def test_trace_rejects_a_missing_harness
    in_tmpdir do |dir|
      File.write(File.join(dir, "tracer.rb"), "require \"ruzzy\"\nRuzzy.trace(\"nope.rb\")\n")
      result = ruby("tracer.rb", chdir: dir)
      assert_exit 1, result
      assert_match(/no such harness file: .*nope\.rb \(ArgumentError\)/, result.stderr)
    end
  end

  private

  def Ruzzy_largest_fitted_map_size(dir) # rubocop:disable Naming/MethodName
    result = ruby("-rruzzy", "-e", "print Ruzzy::FITTED_MAP_SIZES.max", chdir: dir)
    Integer(result.stdout)
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"

# The guidance API (Ruzzy.guide_equal, guide_include, explore_state,
# maximize, minimize; docs/guidance.md): wrong arguments raise before
# anything is reported, calls outside fuzzing do nothing, and each steers a
# search that coverage alone does not.
class TestGuidance < Minitest::Test
  def test_outside_fuzzing_each_call_returns_nil
    assert_nil Ruzzy.guide_equal("abc", "abd", 1)
    assert_nil Ruzzy.guide_equal(1, 2**70, 1)
    assert_nil Ruzzy.guide_include("haystack", "needle", 2)
    assert_nil Ruzzy.explore_state(-5, 3)
    assert_nil Ruzzy.explore_state(2**100, 2**100)
    assert_nil Ruzzy.maximize(5, 0..10, 4)
    assert_nil Ruzzy.minimize(-5, -10...10, 5)
    assert_nil Ruzzy.maximize(10**30, 0..(10**40), 6)
  end

  def test_wrong_arguments_say_what_was_expected
    {
      -> { Ruzzy.guide_equal("a", 1, 1) } => [TypeError, /current and target must be two Strings or two Integers, got/],
      -> { Ruzzy.guide_equal("a", "b", "id") } => [TypeError, /guide_equal: id must be an Integer \(its call site\)/],
      -> { Ruzzy.guide_include("a", :b, 1) } => [TypeError, /guide_include: haystack and needle must be Strings/],
      -> { Ruzzy.explore_state(1.5, 1) } => [TypeError, /explore_state: state must be an Integer, got Float/],
      -> { Ruzzy.maximize(1, 0.., 1) } => [ArgumentError, /maximize: range must be a non-empty Range of two Integers/],
      -> { Ruzzy.minimize(1, 5..1, 1) } => [ArgumentError, /minimize: range must be a non-empty Range .* got 5\.\.1/],
      -> { Ruzzy.maximize(nil, 0..1, 1) } => [TypeError, /maximize: value must be an Integer, got NilClass/]
    }.each do |call, (error, message)|
      raised = assert_raises(error) { call.call }
      assert_match message, raised.message
    end
  end

  # Fuzzes harness.rb in +dir+ (seed 1, its guidance on through +env+;
  # ruzzy's +flags+ before it, libFuzzer's +engine_flags+ after): a
  # finding matching +message+ within +within+ inputs. Its crash file is
  # removed, so that the unguided run after it starts afresh.
  def assert_guided_finds(dir, message, within:, env:, flags: [], engine_flags: [])
    guided = ruzzy(*flags, "harness.rb", "-seed=1", "-runs=#{runs(within)}", *engine_flags, chdir: dir, env:)
    assert_exit 77, guided
    assert_match message, guided.stderr
    FileUtils.rm_f(Dir[File.join(dir, "crash-*")])
  end

  # Fuzzes harness.rb in +dir+ (seed 1, no guidance): +inputs+ inputs find
  # nothing.
  def assert_unguided_finds_nothing(dir, inputs, flags: [], engine_flags: [])
    assert_exit 0, ruzzy(*flags, "harness.rb", "-seed=1", "-runs=#{inputs}", *engine_flags, chdir: dir)
  end

  # The bench's maze (bench/solve/maze_walk.rb): every step runs the same
  # code, so coverage cannot see how far a walk got. Reported with
  # explore_state, each new position is kept and the exit is found (in
  # about 40,000 inputs with seed 1); without, 200,000 inputs get nowhere
  # (nor do 8 million).
  MAZE_WALK = File.expand_path("../../bench/solve/maze_walk", __dir__)

  def test_explore_state_finds_a_path_coverage_cannot_see
    in_tmpdir do |dir|
      write_harness(dir, "require #{MAZE_WALK.inspect}\n" \
                         "Ruzzy.fuzz(->(data) { MazeWalk.walk(data, explore: ENV.key?('EXPLORE')) })")
      assert_guided_finds(dir, /MazeWalk::Solved: reached the exit/, within: 1_000_000, env: { "EXPLORE" => "1" })
      assert_unguided_finds_nothing(dir, 200_000)
    end
  end

  # A length measured in C (a Regexp), which coverage cannot see grow:
  # maximize keeps each input that made it longer (about 50,000 inputs
  # with seed 1), as minimize does with what it still lacks; without,
  # 300,000 inputs do not get there.
  def test_maximize_and_minimize_climb_to_a_large_value
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        Ruzzy.fuzz(lambda { |data|
          run = data[/\AA*/].size
          case ENV["GUIDE"]
          when "maximize" then Ruzzy.maximize(run, 0..400, 9)
          when "minimize" then Ruzzy.minimize(400 - run, 0..400, 9)
          end
          raise "a run of #{run}" if run >= 300
        })
      RUBY
      flags = ["--no-literal-dict"]
      engine_flags = ["-max_len=1000"]
      %w[maximize minimize].each do |guide|
        assert_guided_finds(dir, /RuntimeError: a run of 3\d\d/, within: 2_000_000, env: { "GUIDE" => guide },
                                                                 flags:, engine_flags:)
      end
      assert_unguided_finds_nothing(dir, 300_000, flags:, engine_flags:)
    end
  end

  # An equality and a containment the target checks through a digest,
  # which no comparison hook sees through: the harness names each goal
  # (and leaves the literal dictionary out, which would hold both words).
  def test_guide_equal_and_guide_include_carry_values_into_inputs
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        require "digest"
        OPEN = Digest::SHA256.hexdigest("open sesame")
        MAGIC = Digest::SHA256.hexdigest("xyzzy")
        GUIDE = ENV.key?("GUIDE")
        Ruzzy.fuzz(lambda { |data|
          word, _, rest = data.partition(":")
          Ruzzy.guide_equal(word, "open sesame", 1) if GUIDE
          return unless Digest::SHA256.hexdigest(word) == OPEN

          Ruzzy.guide_include(rest, "xyzzy", 2) if GUIDE
          raise "opened" if rest.split.any? { |part| Digest::SHA256.hexdigest(part) == MAGIC }
        })
      RUBY
      flags = ["--no-literal-dict"]
      assert_guided_finds(dir, /RuntimeError: opened/, within: 2_000_000, env: { "GUIDE" => "1" }, flags:)
      assert_unguided_finds_nothing(dir, 200_000, flags:)
    end
  end
end

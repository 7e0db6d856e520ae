# frozen_string_literal: true

require_relative "test_helper"

# Comparison feedback: installed only while fuzzing, never changes results,
# and solves magic values that blind fuzzing cannot.
class TestCompareHooks < Minitest::Test
  FIXTURE = File.join(__dir__, "fixtures", "comparison_semantics.rb")
  SOLVE = File.join(ROOT, "bench", "solve")

  def test_requiring_ruzzy_keeps_the_fast_paths
    result = ruby("-rruzzy", "-e", <<~RUBY)
      p [Integer, String, Symbol, Hash].map { |k| k.ancestors.first == k }
      p [1.method(:==).owner, "".method(:==).owner, {}.method(:[]).owner]
      p Ruzzy::CompareHooks.installed?
    RUBY
    assert_exit 0, result
    assert_equal "[true, true, true, true]\n[Integer, String, Hash]\nfalse\n", result.stdout
  end

  def test_hooked_comparisons_return_what_ruby_returns
    plain = ruby(FIXTURE)
    hooked = ruby(FIXTURE, "--hooks")
    assert_exit 0, plain
    assert_exit 0, hooked
    assert_equal "hooks installed: false", plain.stdout.lines.first.chomp
    assert_equal "hooks installed: true", hooked.stdout.lines.first.chomp
    assert_operator plain.stdout.lines.size, :>, 50
    assert_equal plain.stdout.lines.drop(1), hooked.stdout.lines.drop(1)
    assert_match(/^refined Integer#==: true$/, hooked.stdout)
    assert_match(/^program's own String#==: \[:redefined, true, false\]$/, hooked.stdout)
    assert_match(/^program's own prepend: \[:from_prepended_module, 1\]$/, hooked.stdout)
    assert_match(/^redefined while fuzzing: \[:redefined_while_fuzzing, :redefined_while_fuzzing, false\]$/,
                 hooked.stdout)
  end

  def test_fuzz_installs_the_hooks_unless_told_not_to
    in_tmpdir do |dir|
      probe = "Ruzzy.fuzz(->(_) { raise 'hooks on' if Ruzzy::CompareHooks.installed? }%s)"
      write_harness(dir, format(probe, ""), name: "on.rb")
      write_harness(dir, format(probe, ", ['off.rb', '-runs=10'], compare_hooks: false"), name: "off.rb")
      assert_exit 77, ruzzy("on.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("off.rb", chdir: dir)
      assert_exit 0, ruzzy("--no-compare-hooks", "on.rb", "-runs=10", chdir: dir)
    end
  end

  { "magic_string" => "magic string", "case_when" => "magic word", "chained_bytes" => "six bytes",
    "magic_integer" => "magic integer" }.each do |name, message|
    define_method("test_solves_#{name}") do
      search_test!
      in_tmpdir do |dir|
        result = ruzzy(File.join(SOLVE, "#{name}.rb"), "-seed=1", "-runs=#{runs(3_000_000)}", chdir: dir)
        assert_exit 77, result
        assert_match(/RuntimeError: #{message}/, result.stderr)
      end
    end
  end

  # Comparisons count only in instrumented code: the same check made in a
  # file excluded from coverage gives libFuzzer nothing to solve it with.
  def test_comparisons_in_code_that_is_not_instrumented_are_not_reported
    search_test!
    in_tmpdir do |dir|
      File.write(File.join(dir, "secret.rb"), <<~RUBY)
        module Secret
          def self.match?(data) = data == "SECRETKEY12345"
        end
      RUBY
      write_harness(dir, <<~RUBY)
        require_relative "secret"
        Ruzzy.fuzz(->(data) { raise "magic string" if Secret.match?(data) })
      RUBY
      solved = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(3_000_000)}", chdir: dir)
      assert_exit 77, solved
      assert_match(/RuntimeError: magic string/, solved.stderr)
      assert_exit 0, ruzzy("--exclude=secret.rb", "harness.rb", "-seed=1", "-runs=#{runs(300_000)}", chdir: dir)
    end
  end

  def test_magic_string_is_out_of_reach_without_the_hooks
    in_tmpdir do |dir|
      result = ruzzy("--no-compare-hooks", File.join(SOLVE, "magic_string.rb"), "-seed=1", "-runs=#{runs(300_000)}",
                     chdir: dir)
      assert_exit 0, result
    end
  end
end

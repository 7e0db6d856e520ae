# frozen_string_literal: true

require_relative "../test_helper"

# Comparison feedback: installed only while fuzzing, never changes results,
# and solves magic values that blind fuzzing cannot.
class TestCompareHooks < Minitest::Test
  FIXTURE = File.join(FIXTURES, "comparison_semantics.rb")

  def test_requiring_ruzzy_keeps_the_fast_paths
    result = ruby("-rruzzy", "-e", <<~RUBY)
      p [Integer, String, Symbol, Hash, Float, Regexp, Kernel].map { |k| k.ancestors.first == k }
      p [1.method(:==).owner, "".method(:==).owner, {}.method(:[]).owner, //.method(:match).owner]
      p Ruzzy::CompareHooks.installed?
    RUBY
    assert_exit 0, result
    assert_equal "[true, true, true, true, true, true, true]\n[Integer, String, Hash, Regexp]\nfalse\n",
                 result.stdout
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
    assert_match(/^named captures: \["2024", "05"\]$/, hooked.stdout)
    assert_match(/^gsub with block and \$&: "heLLo"$/, hooked.stdout)
    assert_match(/^scanner: \["let", nil, 1, "x", "x =", 7, "=", " 42", "42", 1, nil, ";"\]$/, hooked.stdout)
    assert_match(/^Integer is private: \[true, false\]$/, hooked.stdout)
    timeout = RUBY_VERSION >= "3.2" ? "raised Regexp::TimeoutError: regexp match timeout" : "\"no Regexp.timeout\""
    assert_includes hooked.stdout, "regexp timeout: #{timeout}\n"
    assert_match(/^redefined while fuzzing: \[:redefined_while_fuzzing, :redefined_while_fuzzing, false\]$/,
                 hooked.stdout)
    redefined = ":redefined_while_fuzzing"
    assert_includes hooked.stdout, "redefined Hash and Integer: [#{redefined}, #{redefined}, true, #{redefined}, 3]\n"
    assert_includes hooked.stdout, "redefined Symbol: [#{redefined}, #{redefined}, false, true, false]\n"
    assert_includes hooked.stdout, "redefined Array#include?: [#{redefined}, #{redefined}]\n"
  end

  # libFuzzer keys its tables of recent comparisons by the low 12 bits of
  # each comparison's PC (one stub per Ruby call site): with the stub table
  # on a 4 KiB boundary a seed runs the same inputs in every build.
  def test_comparison_pcs_do_not_depend_on_the_build
    result = ruby("-rruzzy", "-e", "puts $LOADED_FEATURES.grep(/ruzzy_ext/)")
    assert_exit 0, result
    symbols = run_command("nm", result.stdout.strip).stdout
    address = symbols[/^(\h+) t ruzzy_cmp_stubs$/, 1]
    refute_nil address, "nm lists the stub table"
    assert_equal 0, Integer(address, 16) % 4096
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

  def test_hook_groups_can_be_chosen
    in_tmpdir do |dir|
      probe = <<~RUBY
        Ruzzy.fuzz(lambda do |_|
          raise "installed: \#{Ruzzy::CompareHooks::HOOKS.map { |_, k, m| k.is_a?(Module) && k.ancestors.include?(m) }}"
        end%s)
      RUBY
      write_harness(dir, format(probe, ", compare_hooks: %i[integer regexp]"), name: "chosen.rb")
      write_harness(dir, format(probe, ""), name: "default.rb")
      chosen = ruzzy("chosen.rb", "-runs=1", chdir: dir)
      assert_exit 77, chosen
      assert_match(/installed: \[true, false, false, false, false, false, true, true, false, false, false, false\]/,
                   chosen.stderr)
      from_env = ruzzy("default.rb", "-runs=1", chdir: dir, env: { "RUZZY_COMPARE_HOOKS" => "float,conversion" })
      assert_match(/installed: \[false, false, false, false, false, true, false, false, false, true, true, true\]/,
                   from_env.stderr)

      write_harness(dir, "Ruzzy.fuzz(->(_) {}, compare_hooks: %i[integer floats])", name: "unknown.rb")
      unknown = ruzzy("unknown.rb", chdir: dir)
      assert_exit 1, unknown
      known = "integer, string, symbol, hash, array, float, regexp, conversion"
      assert_includes unknown.stderr, "compare_hooks (or RUZZY_COMPARE_HOOKS): unknown group floats (known: #{known})"
    end
  end

  # YJIT cannot compile Integer#<, <=, >, >=, %, === and Hash#[] once they
  # are redefined (it leaves its code at each): under YJIT they stay
  # Ruby's own and the INFO line says so; the other hooks are installed.
  # On a Ruby without YJIT (`--yjit` only warns) every hook is.
  def test_under_yjit_the_operations_yjit_cannot_compile_redefined_are_not_hooked
    yjit = ruby("--yjit", "-e", "print defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? 1 : 0").stdout == "1"
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda do |_|
          owners = [1.method(:<), 1.method(:%), 1.method(:===), 1.method(:==), {}.method(:[]), {}.method(:fetch)]
          raise "owners: \#{owners.map { |m| m.owner.name.split("::").last }.join(" ")}"
        end)
      RUBY
      result = ruzzy("harness.rb", "-runs=1", chdir: dir, env: { "RUBYOPT" => "--yjit" })
      assert_exit 77, result
      if yjit
        assert_includes result.stderr, "owners: Integer Integer Integer IntegerHooks Hash HashHooks"
        assert_includes result.stderr, "INFO: ruzzy: YJIT is on: Integer#<, Integer#<=, Integer#>, Integer#>=, " \
                                       "Integer#%, Integer#===, Hash#[] report no comparisons"
      else
        assert_includes result.stderr, "owners: IntegerHooks IntegerHooks IntegerHooks IntegerHooks HashHooks HashHooks"
        refute_includes result.stderr, "YJIT is on"
      end
    end
  end

  # A literal invalid in its source's encoding (net/http has some) is a
  # word like any other.
  def test_a_literal_invalid_in_its_encoding_is_a_dictionary_word
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        MARK = "\xFFomega mark".freeze
        Ruzzy.fuzz(->(data) { raise "found" if data == MARK })
      RUBY
      result = ruzzy("harness.rb", "-runs=1", chdir: dir)
      assert_exit 0, result
      assert_match(/INFO: ruzzy: 1 dictionary word from the literals of instrumented code/, result.stderr)
    end
  end

  # The literals of the instrumented code become libFuzzer dictionary
  # words, merged with the user's -dict.
  def test_the_program_literals_are_a_dictionary
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        TOKENS = %w[alpha beta].freeze
        Ruzzy.fuzz(lambda do |data|
          raise "found" if data.match?(/\\A<gamma>\\d+/) || TOKENS.include?(data) || data == :delta.to_s
          raise "found" if data.to_i == 4242 || data.size == 7
        end)
      RUBY
      File.write(File.join(dir, "user.dict"), "\"user-word\"\nother=\"second\"\n")
      result = ruzzy("harness.rb", "-runs=1", "-dict=user.dict", chdir: dir, env: { "TMPDIR" => dir })
      assert_exit 0, result
      # "alpha", "beta", "<gamma>", "<gamma>0", "delta" (the harness's
      # literals, but not what it passes to require or raise, nor numbers:
      # libFuzzer's comparison tables write those), and the user's two.
      assert_match(/INFO: ruzzy: 5 dictionary words from the literals of instrumented code/, result.stderr)
      assert_match(/^Dictionary: 7 entries$/, result.stderr)
      written = Dir.glob(File.join(dir, "ruzzy-*-dictionaries", "*.dict"))
      assert_equal 1, written.size
      text = File.read(written.first)
      ["user-word", "second", "alpha", "<gamma>", "<gamma>0", "delta"].each do |word|
        assert_includes text, "\"#{word}\""
      end
      %w[ruzzy found 4242].each { |word| refute_includes text, "\"#{word}\"" }

      off = ruzzy("--no-literal-dict", "harness.rb", "-runs=1", chdir: dir)
      assert_exit 0, off
      refute_match(/dictionary words/, off.stderr)
      refute_match(/^Dictionary:/, off.stderr)
      assert_match(/^Dictionary: 2 entries$/, ruzzy("--no-compare-hooks", "harness.rb", "-runs=1", "-dict=user.dict",
                                                    chdir: dir).stderr)
    end
  end

  def test_magic_string_is_out_of_reach_without_the_hooks
    in_tmpdir do |dir|
      assert_exit 0, solve(dir, "magic_string", runs(300_000), "--no-compare-hooks")
    end
  end
end

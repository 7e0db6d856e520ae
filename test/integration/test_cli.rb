# frozen_string_literal: true

require_relative "../test_helper"

# The `ruzzy` command's own behaviour: help, version, and clear messages with
# defined exit statuses for everything that can go wrong before fuzzing.
class TestCli < Minitest::Test
  def test_help
    result = ruzzy("--help")
    assert_exit 0, result
    assert_match(/Usage: ruzzy \[OPTIONS\] HARNESS\.rb/, result.stdout)
  end

  # README's list of the `ruzzy` command's options has every option that
  # `ruzzy --help` lists, so the two cannot drift apart.
  def test_every_option_of_the_help_is_in_the_readme
    help = ruzzy("--help").stdout
    options = help[/^Options.*?:\n(.*?)\n\n/m, 1].lines.grep(/\A  -/).flat_map do |line|
      line.scan(/(?:\A\s+|, )(--?[A-Za-z][\w-]*)/).flatten
    end
    assert_operator options.size, :>=, 15, help
    readme = File.read(File.join(ROOT, "README.md"))[/^## The `ruzzy` command\n.*?(?=^## )/m]
    missing = options.reject { |option| readme.match?(/(?<![\w-])#{Regexp.escape(option)}(?![\w-])/) }
    assert_empty missing, "options of ruzzy --help missing from README's \"The `ruzzy` command\""
  end

  def test_version
    result = ruzzy("--version")
    assert_exit 0, result
    assert_match(/\Aruzzy \d+\.\d+\.\d+\n\z/, result.stdout)
  end

  def test_no_harness_is_a_usage_error
    result = ruzzy
    assert_exit 2, result
    assert_match(/ruzzy: no harness given/, result.stderr)
  end

  def test_unknown_option_is_a_usage_error
    result = ruzzy("--frobnicate", "x.rb")
    assert_exit 2, result
    assert_match(/unknown option --frobnicate/, result.stderr)
  end

  # Not read as an abbreviation of a ruzzy option (-m for --map-size).
  def test_a_libfuzzer_flag_before_the_harness_says_where_it_goes
    result = ruzzy("--no-literal-dict", "-max_len=1000", "x.rb")
    assert_exit 2, result
    assert_match(/-max_len=1000 is a libFuzzer flag: it goes after the harness \(ruzzy \[options\] HARNESS -max_len/,
                 result.stderr)
  end

  # After the harness, ruzzy's options would go to libFuzzer, which
  # ignores them: the run would go on without the user's --ignore.
  def test_a_ruzzy_option_after_the_harness_says_where_it_goes
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { nil })")
      result = ruzzy("harness.rb", "--ignore=TypeError", "--no-compare-hooks", "--own", "-runs=1", chdir: dir)
      assert_exit 0, result
      said = result.stderr.scan(/^ruzzy: (--\S+) comes after the harness, where it goes to libFuzzer, which ignores/)
      assert_equal [["--ignore=TypeError"], ["--no-compare-hooks"]], said, result.stderr
      assert_match(/ruzzy's options go before the harness \(ruzzy \[options\] --ignore=TypeError HARNESS \.\.\.\)$/,
                   result.stderr)
      # Before a "--", the harness's own arguments; after it, libFuzzer's.
      split = ruzzy("harness.rb", "--workers=2", "--", "-runs=1", "--keep-going", chdir: dir)
      assert_exit 0, split
      assert_equal ["--keep-going"], split.stderr.scan(/^ruzzy: (--\S+) comes after the harness/).flatten, split.stderr
    end
  end

  def test_bad_map_size_is_a_usage_error
    result = ruzzy("--map-size=lots", "x.rb")
    assert_exit 2, result
    assert_match(/--map-size takes a whole number/, result.stderr)
  end

  def test_missing_harness_file
    in_tmpdir do |dir|
      result = ruzzy("nope.rb", chdir: dir)
      assert_exit 2, result
      assert_match(/no such harness file: nope\.rb/, result.stderr)
    end
  end

  def test_harness_raising_while_loading
    in_tmpdir do |dir|
      File.write(File.join(dir, "broken.rb"), "require \"ruzzy\"\nraise NameError, \"oops at load\"\n")
      result = ruzzy("broken.rb", chdir: dir)
      assert_exit 1, result
      assert_match(/broken\.rb raised while loading, before fuzzing started/, result.stderr)
      assert_match(/NameError: oops at load/, result.stderr)
      assert_match(/from .*broken\.rb:2/, result.stderr)
    end
  end

  def test_harness_that_never_fuzzes
    in_tmpdir do |dir|
      File.write(File.join(dir, "idle.rb"), "x = 1\n")
      result = ruzzy("idle.rb", chdir: dir)
      assert_exit 2, result
      assert_match(/finished without calling Ruzzy\.fuzz/, result.stderr)
    end
  end

  def test_harness_exit_status_is_kept
    in_tmpdir do |dir|
      File.write(File.join(dir, "quits.rb"), "exit 5\n")
      assert_exit 5, ruzzy("quits.rb", chdir: dir)
    end
  end

  def test_harness_arguments_reach_libfuzzer
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_data) { nil })")
      result = ruzzy("harness.rb", "-runs=7", "-seed=3", chdir: dir)
      assert_exit 0, result
      assert_match(/INFO: Seed: 3/, result.stderr)
      assert_match(/Done 7 runs/, result.stderr)
    end
  end

  def test_libfuzzer_help_returns_normally
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_data) { nil })")
      result = ruzzy("harness.rb", "-help=1", chdir: dir)
      assert_exit 0, result
      assert_match(/Usage:/, result.stderr)
    end
  end
end

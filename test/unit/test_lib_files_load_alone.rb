# frozen_string_literal: true

require_relative "../test_helper"

# Every Ruby file of lib/ requires what it uses: required alone, in a
# process that has loaded nothing of ruzzy, it loads without a NameError or
# LoadError and without a circular require, and every constant it names
# resolves (test/support/lone_require.rb says how). A file that works only
# because ruzzy.rb happened to load another first fails here.
class TestLibFilesLoadAlone < Minitest::Test
  # The lib/ that `require "ruzzy"` loads in this run: the checkout's
  # (in-tree build), else the installed gem's.
  LIB = File.dirname(Gem.find_files("ruzzy.rb").first)
  RUNNER = File.join(RuzzyTestHelper::ROOT, "test", "support", "lone_require.rb")

  # Programs, not libraries: run as `ruby FILE ARGS`, never required.
  PROGRAMS = ["ruzzy/cli/cov/replay.rb"].freeze

  def files
    Dir.glob("**/*.rb", base: LIB).sort - PROGRAMS
  end

  def test_each_file_loads_alone_and_resolves_the_constants_it_names
    assert_operator files.size, :>, 50, "lib/ is where it was expected: #{LIB}"
    stdout, stderr, status = Open3.capture3("timeout", "-s", "KILL", "300", RbConfig.ruby, "-I", LIB, RUNNER,
                                            *files.map { |file| File.join(LIB, file) })
    assert status.success?, "the check failed: #{stderr}"
    results = stdout.lines.map { |line| JSON.parse(line) }
    assert_equal files.size, results.size, stderr
    failures = results.filter_map do |result|
      problems = [result["error"], *result["unresolved"], *result["circular"]].compact
      "#{result["file"].delete_prefix("#{LIB}/")}: #{problems.join("; ")}" unless problems.empty?
    end
    assert_empty failures, "files that do not require what they use (unresolved constants, with their line)"
  end

  # The check finds what it is there to find: a constant from a file not
  # required, one named only inside a method, and a circular require.
  def test_the_check_reports_what_a_file_does_not_require
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "a.rb"), "require_relative 'b'\nmodule Ruzzy; A = 1; end\n")
      File.write(File.join(dir, "b.rb"), "require_relative 'a'\nmodule Ruzzy; def self.b = Session.new; end\n")
      File.write(File.join(dir, "c.rb"), "module Ruzzy; C = Findings::Report; end\n")
      stdout, = Open3.capture3(RbConfig.ruby, "-I", LIB, RUNNER, *%w[a b c].map { |name| File.join(dir, "#{name}.rb") })
      a, b, c = stdout.lines.map { |line| JSON.parse(line) }
      assert_match(/circular require/, a["circular"].join)
      assert_equal ["Session (line 2)"], b["unresolved"]
      assert_match(/NameError: uninitialized constant Ruzzy::Findings\b/, c["error"])
    end
  end
end

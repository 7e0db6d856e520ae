# frozen_string_literal: true

# Which quick test files (test/unit, test/integration) to run for the
# files changed in the checkout (`bin/test --affected`, `rake
# test:affected`). The rule, first match wins for each changed file:
#
#   1. a test file is itself;
#   2. a file is tested by the test files named after it or its folder
#      (lib/ruzzy/detectors/redos.rb: test_redos*, test_*_redos*, then
#      test_detectors*; ext/ruzzy/src/coverage/quiet.rs: test_quiet_coverage);
#   3. else by the test files that mention its name as a word
#      (case-insensitive: a constant, a path, a flag);
#   4. else by every quick test file.
#
# A guess from names, not a coverage map: the full bin/test is still what
# a change must pass. Run as a script, prints one line per changed file
# (to stderr) and the test files (to stdout); with --ruby, the changed
# files rubocop checks instead.
module Affected
  ROOT = File.expand_path("../..", __dir__)

  # The folder names that say nothing about what a file does.
  PLAIN_FOLDERS = %w[. lib ruzzy src ext test support fixtures bin exe].freeze

  module_function

  # The changed files: tracked ones changed against HEAD, and untracked
  # ones git does not ignore.
  def changed
    Dir.chdir(ROOT) do
      (`git diff --name-only HEAD`.lines + `git ls-files --others --exclude-standard`.lines)
        .map(&:chomp).uniq.select { |path| File.file?(path) }
    end
  end

  # The changed files rubocop checks (its Include list: Ruby files, the
  # Rakefile, Gemfile, gemspec and the ruzzy executable).
  def ruby_files(paths = changed)
    paths.grep(%r{\.(rb|gemspec)\z|\A(Rakefile|Gemfile|exe/ruzzy)\z})
  end

  def quick_tests
    Dir.chdir(ROOT) { Dir["test/{unit,integration}/test_*.rb"] }
  end

  # [test files, why] for +path+ (relative to the root).
  def tests_for(path, tests = quick_tests)
    return [[path], "is a test file"] if path.match?(%r{\Atest/\w+/test_\w+\.rb\z})

    stem = File.basename(path, ".*")
    folder = File.basename(File.dirname(path))
    [stem, folder].uniq.reject { |word| PLAIN_FOLDERS.include?(word) }.each do |word|
      named = tests.select { |test| "_#{File.basename(test, ".rb")}_".include?("_#{word}_") }
      return [named, "named after #{word}"] unless named.empty?
    end
    mentioned = tests.select { |test| File.read(File.join(ROOT, test)).match?(/\b#{Regexp.escape(stem)}\b/i) }
    return [mentioned, "mention #{stem}"] unless mentioned.empty?

    [tests, "nothing names it: every quick test"]
  end

  # Every test file the changed files call for, once.
  def tests(paths = changed)
    paths.flat_map { |path| tests_for(path).first }.uniq.sort
  end
end

if $PROGRAM_NAME == __FILE__ && ARGV == ["--ruby"]
  puts Affected.ruby_files
elsif $PROGRAM_NAME == __FILE__
  paths = Affected.changed
  warn "affected: nothing changed against HEAD" if paths.empty?
  paths.each do |path|
    files, why = Affected.tests_for(path)
    warn "affected: #{path} -> #{files.size} file(s), #{why}"
  end
  puts Affected.tests(paths)
end

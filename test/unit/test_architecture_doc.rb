# frozen_string_literal: true

require_relative "../test_helper"

# docs/architecture.md holds nothing the code can make false unnoticed:
# every function the native code gives C to call (an `extern "C" fn`: a
# method body, an event hook, a signal handler, a sanitizer or libFuzzer
# callback, a trampoline) has a row in its "Entry points from C" table,
# every source file (Rust, C, and Ruby under lib/) has a row, and no table
# counts lines.
class TestArchitectureDoc < Minitest::Test
  ROOT = RuzzyTestHelper::ROOT
  SRC = File.join(ROOT, "ext", "ruzzy", "src")
  DOC = File.join(ROOT, "docs", "architecture.md")
  # A definition (not a type, a parameter or a declaration in an
  # `extern "C" { ... }` block, which has no `extern "C"` of its own).
  DEFINITION = /^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:unsafe\s+)?extern "C" fn (\w+)/

  # [module path ("findings::reproduce"; "crate" for lib.rs), function name].
  def entry_points
    Dir.glob("**/*.rs", base: SRC).sort.flat_map do |file|
      path = file.delete_suffix(".rs").delete_suffix("/mod").split("/").join("::")
      path = "crate" if path == "lib"
      File.read(File.join(SRC, file)).scan(DEFINITION).map { |(name)| [path, name] }
    end
  end

  def section(title)
    File.read(DOC)[/^## #{Regexp.escape(title)}\n(.*?)(?=^## |\z)/m, 1] or flunk "no section #{title}"
  end

  # A row names `path::name` by a code span that starts with the path
  # (`findings::reproduce::before_death`, `rb::protect`'s) and a code span
  # with the name as a word (the same one, or `trampoline` beside it).
  def named?(rows, path, name)
    rows.any? do |row|
      spans = row.scan(/`([^`]+)`/).flatten
      spans.any? { |span| span == path || span.start_with?("#{path}::") } &&
        spans.any? { |span| span.match?(/\b#{Regexp.escape(name)}\b/) }
    end
  end

  def test_every_extern_c_function_has_a_row_in_entry_points_from_c
    found = entry_points
    assert_operator found.size, :>, 40, "ext/ruzzy/src is where it was expected"
    assert_includes found, ["engine::signals", "on_fatal_signal"], "the scan finds signal handlers"
    rows = section("Entry points from C").lines.grep(/\A\| `/)
    missing = found.reject { |path, name| named?(rows, path, name) }
    assert_empty missing.map { |path, name| "#{path}::#{name}" },
                 "entry points from C missing in docs/architecture.md (a row: what calls it, what it " \
                 "allocates, whether it may run Ruby code; for a signal handler, that it is async-signal-safe)"
  end

  # Every source file of the crate has a row saying what it is for (a
  # subsystem's mod.rs is the subsystem's own row, its folder).
  def test_every_native_source_file_has_a_row
    files = Dir.glob("**/*.{rs,c}", base: SRC).reject { |file| file.end_with?("/mod.rs") }
    assert_operator files.size, :>, 50, "ext/ruzzy/src is where it was expected"
    rows = File.read(DOC).lines.grep(/\A\| `/)
    missing = files.reject do |file|
      rows.any? { |row| row.start_with?("| `#{file}`", "| `ext/ruzzy/src/#{file}`") }
    end
    assert_empty missing, "source files without a row in docs/architecture.md (what each one is for)"
  end

  # The files of lib/ a row of "Ruby files (`lib/`)" names in its first
  # column: the first code span is a path from lib/ (`ruzzy/engine/session.rb`);
  # a later one is a file beside it (`store.rb`) or, with a slash, a path from
  # lib/ruzzy/ (`web/request.rb`); a span ending in a slash (`detectors/`)
  # names every file under that folder.
  def ruby_files_named(row)
    first, *others = row.split("|")[1].to_s.scan(/`([^`]+)`/).flatten
    return [] unless first&.start_with?("ruzzy")

    [first, *others.map do |span|
      span.include?("/") ? "ruzzy/#{span}" : File.join(File.dirname(first), span)
    end].flat_map do |path|
      path.end_with?("/") ? Dir.glob("#{path}**/*.rb", base: File.join(ROOT, "lib")) : [path]
    end
  end

  def test_every_ruby_file_has_a_row
    files = Dir.glob("**/*.rb", base: File.join(ROOT, "lib")).sort
    assert_operator files.size, :>, 100, "lib/ is where it was expected"
    named = section("Ruby files (`lib/`)").lines.grep(/\A\| `/).flat_map { |row| ruby_files_named(row) }
    assert_empty files - named, "Ruby files without a row in docs/architecture.md's \"Ruby files (`lib/`)\""
    assert_empty named - files, "rows in docs/architecture.md's \"Ruby files (`lib/`)\" for files that do not exist"
  end

  def test_the_check_reads_a_ruby_row_as_its_files
    assert_equal %w[ruzzy/findings/report.rb ruzzy/findings/store.rb ruzzy/web/request.rb],
                 ruby_files_named("| `ruzzy/findings/report.rb`, `store.rb`, `web/request.rb` | `x.rb` |\n")
    assert_includes ruby_files_named("| `ruzzy/detectors.rb`, `detectors/` | x |\n"), "ruzzy/detectors/report.rb"
    assert_equal ["ruzzy.rb"], ruby_files_named("| `ruzzy.rb` | the API |\n")
  end

  def test_the_check_tells_a_row_from_a_mention_elsewhere
    rows = ["| `findings::reproduce` `before_death` | x |\n", "| `rb::protect`'s `trampoline` | x |\n",
            "| `feedback::compare_hooks::hash::{aref, key_p}` | x |\n"]
    assert named?(rows, "findings::reproduce", "before_death")
    assert named?(rows, "rb", "trampoline")
    refute named?(rows, "rb::value", "trampoline")
    assert named?(rows, "feedback::compare_hooks::hash", "key_p")
    refute named?(rows, "feedback::compare_hooks::array", "key_p")
    refute named?(rows, "findings::reproduce", "after_asan_report")
  end

  def test_no_table_counts_lines
    rows = File.read(DOC).lines.grep(/\A\|.*\|\s*\z/)
    headers = rows.select { |line| line.split("|").map(&:strip).include?("lines") }
    assert_empty headers, "line counts go stale; the files say how long they are"
  end
end

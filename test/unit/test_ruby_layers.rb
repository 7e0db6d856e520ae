# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/floors"

# The Ruby half stands in floors too (test/unit/test_layers.rb checks the
# native half). Its units are lib/ruzzy.rb (named "ruzzy"), each folder of
# lib/ruzzy/ with its entry file lib/ruzzy/X.rb when there is one (gen.rb
# and gen/ are "gen"), and each other file of lib/ruzzy/ ("settings").
# Each unit states in one line of a header, the leading comment block of
# one of its files, what it may use ("# May use: error, settings." or
# "# May use: nothing."; a long list goes on over the next comment lines
# up to its full stop): a top-level file in itself, a folder in its entry
# file, or in one file of the folder when it has none. Every
# `require_relative` and `require "ruzzy..."` of lib/, wherever it stands
# (a require inside a method counts), must reach its own unit or one its
# line names, and the lines must order the units in floors: lib/ has no
# circle and no require running back up. docs/architecture.md draws the
# floors as these lines make them.
class TestRubyLayers < Minitest::Test
  include Floors

  LIB = File.join(RuzzyTestHelper::ROOT, "lib")
  DOC = File.join(RuzzyTestHelper::ROOT, "docs", "architecture.md")
  MAY_USE = /\A# May use: (.*)\z/
  NAME = /\A[a-z_]+\z/
  # A require of a file of lib/: `require_relative "x"`, `require "ruzzy/x"`.
  REQUIRE = /^[^#\n]*?\b(require_relative|require)[ (]\s*["']([^"']+)["']/

  # The unit a file of lib/ belongs to ("ruzzy/findings/report.rb": "findings").
  def unit_of(path)
    return "ruzzy" if path == "ruzzy.rb"

    path.delete_prefix("ruzzy/").split("/").first.delete_suffix(".rb")
  end

  # {"findings" => ["ruzzy/findings/identity.rb", ...], "ruzzy" => ["ruzzy.rb"], ...}
  def units
    Dir.glob("**/*.rb", base: LIB).sort.group_by { |path| unit_of(path) }
  end

  # The file that must hold unit +name+'s line when it has one: the
  # top-level file, a folder's entry file; nil for a folder without one.
  def entry_file(name, files)
    entry = name == "ruzzy" ? "ruzzy.rb" : "ruzzy/#{name}.rb"
    files.include?(entry) ? entry : nil
  end

  # The units a header (a file's text) says its unit may use; nil when its
  # leading comment block has no such line, [] for "nothing.", :unreadable
  # for one that does not parse.
  def declared(text)
    lines = text.lines.map(&:strip).take_while { |line| line.empty? || line.start_with?("#") }
    start = lines.index { |line| line.match?(MAY_USE) } or return nil
    list = lines[start][MAY_USE, 1]
    lines.drop(start + 1).each do |line|
      break if list.end_with?(".") || !line.start_with?("# ")

      list = "#{list} #{line.delete_prefix("# ")}"
    end
    return [] if list == "nothing."

    names = list.delete_suffix(".").split(", ")
    list.end_with?(".") && names.all? { |name| name.match?(NAME) } ? names : :unreadable
  end

  # {unit => its list, or a String saying what is wrong with its line}.
  def declarations
    units.to_h do |name, files|
      found = files.filter_map { |path| (list = declared(File.read(File.join(LIB, path)))) && [path, list] }
      [name, problem(found, entry_file(name, files)) || found.first.last]
    end
  end

  # What is wrong with a unit's lines, +found+ ([[path, list], ...]), its
  # entry file being +entry+; nil when nothing is.
  def problem(found, entry)
    if found.empty? then "no `# May use:` line in its header"
    elsif found.size > 1 then "#{found.size} May use lines (#{found.map(&:first).join(", ")}): one"
    elsif entry && found.first.first != entry then "its line is in #{found.first.first}, not #{entry}"
    elsif found.first.last == :unreadable then "a May use line that does not read `a, b_c.` or `nothing.`"
    end
  end

  # The units a file's requires reach, [[line number, unit], ...]:
  # `require_relative` resolved from +path+ (relative to LIB), `require
  # "ruzzy/x"` from LIB; a require of anything outside lib/ruzzy is no
  # unit's.
  def required(path, text)
    text.each_line.with_index(1).filter_map do |line, number|
      kind, target = line.match(REQUIRE)&.captures
      next unless kind

      from = kind == "require_relative" ? File.dirname(File.join(LIB, path)) : LIB
      target = File.expand_path(target.end_with?(".rb") ? target : "#{target}.rb", from)
      relative = target.delete_prefix("#{LIB}/")
      [number, unit_of(relative)] if target != relative && (relative == "ruzzy.rb" || relative.start_with?("ruzzy/"))
    end
  end

  # ["ruzzy/findings/report.rb:6 requires engine", ...] for unit +name+,
  # whose files are {path => text}; +allowed+ is its declared list.
  def violations(name, texts, allowed)
    texts.flat_map do |path, text|
      required(path, text).filter_map do |number, used|
        "#{path}:#{number} requires #{used}" unless used == name || allowed.include?(used)
      end
    end
  end

  def shown(name)
    return "ruzzy.rb" if name == "ruzzy"

    File.directory?(File.join(LIB, "ruzzy", name)) ? "#{name}/" : "#{name}.rb"
  end

  def test_every_unit_states_what_it_may_use
    found = declarations
    assert_operator found.size, :>=, 30, "lib/ruzzy is where it was expected"
    wrong = found.reject { |_, list| list.is_a?(Array) }.map { |name, problem| "#{shown(name)}: #{problem}" }
    assert_empty wrong, "each unit has one `# May use: a, b.` (or `nothing.`) line in a header: a top-level " \
                        "file's own, a folder's entry file's (or one of its files' when it has none)"
    unknown = found.flat_map { |name, list| Array(list).reject { |used| found.key?(used) && used != name } }
    assert_empty unknown, "May use lines name units that do not exist"
  end

  def test_no_unit_requires_what_it_may_not
    found = declarations
    wrong = units.flat_map do |name, files|
      texts = files.to_h { |path| [path, File.read(File.join(LIB, path))] }
      violations(name, texts, Array(found.fetch(name)))
    end
    assert_empty wrong, "requires a unit its May use line does not allow: move the code down (or up), or " \
                        "invert the call (a hook registered at start-up), rather than widen the line"
  end

  def test_the_check_finds_a_forbidden_require
    texts = { "ruzzy/findings/report.rb" => <<~RUBY }
      # require_relative "../cli" in a comment only.
      require "json"
      require_relative "../engine/session"
      require_relative "store"
      require_relative "../error"
      def f = require("ruzzy")
      def g
        require "ruzzy/web"
      end
    RUBY
    assert_equal ["ruzzy/findings/report.rb:3 requires engine", "ruzzy/findings/report.rb:6 requires ruzzy",
                  "ruzzy/findings/report.rb:8 requires web"],
                 violations("findings", texts, %w[error])
    assert_empty violations("gen", { "ruzzy/gen.rb" => "require_relative \"gen/arguments\"\n" }, [])
    assert_equal ["ruzzy.rb:1 requires compat"],
                 violations("ruzzy", { "ruzzy.rb" => "require_relative \"ruzzy/compat\"\n" }, [])
  end

  def test_the_check_reads_a_header
    assert_equal %w[error settings], declared("# frozen_string_literal: true\n\n# May use: error, settings.\n\nx = 1\n")
    assert_equal %w[a b c], declared("# Header.\n# May use: a,\n# b, c.\nrequire \"x\"\n")
    assert_equal [], declared("# May use: nothing.\n")
    assert_nil declared("require \"x\"\n# May use: error.\n"), "only the leading comment block is a header"
    assert_equal :unreadable, declared("# May use: Error and settings\n")
  end

  def test_the_may_use_lines_order_the_units_in_floors
    found = floors(declarations)
    assert_equal 1, found.fetch("error")
    assert_operator found.fetch("native"), :>, found.fetch("finding_kinds"), "the extension reads the kinds"
    assert_equal found.values.max, found.fetch("cli"), "the `ruzzy` command stands above every unit"
    assert_raises(Minitest::Assertion) { floors({ "a" => ["b"], "b" => ["a"] }) }
  end

  def test_the_architecture_doc_draws_the_floors_the_may_use_lines_make
    expected = picture(floors(declarations))
    drawn = File.read(DOC)[/^### The Ruby half\n.*?```text\n(.*?)\n```/m, 1]
    refute_nil drawn, "docs/architecture.md's Floors section has a `### The Ruby half` with a ```text picture"
    assert_equal expected, drawn, "docs/architecture.md's Ruby floors, as the May use lines make them"
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/floors"

# The native modules stand in floors. Each states in its `//!` header, in one
# line, what it may use: a folder in its `mod.rs`, a single-file module
# (`error.rs`, `compat.rs`, `lib.rs`) in itself ("May use: crate::rb,
# crate::process." or "May use: nothing."). Every path to another module in
# its code (`use crate::X`, `crate::X::...`, `use crate::{X, Y}`) must be one
# of those, no `super::` may climb out of it, and the lines must order the
# modules in floors: the crate has no circle and no import running back up.
# docs/architecture.md draws the floors as these lines make them.
class TestLayers < Minitest::Test
  include Floors

  SRC = File.join(RuzzyTestHelper::ROOT, "ext", "ruzzy", "src")
  DOC = File.join(RuzzyTestHelper::ROOT, "docs", "architecture.md")
  MAY_USE = %r{^//! May use: (.*)$}

  # {"engine" => "ext/ruzzy/src/engine/mod.rs", "error" => ".../error.rs", "lib" => ".../lib.rs"}
  def headers
    Dir.children(SRC).sort.filter_map do |entry|
      path = File.join(SRC, entry)
      if File.directory?(path)
        [entry, File.join(path, "mod.rs")]
      elsif entry.end_with?(".rs")
        [entry.delete_suffix(".rs"), path]
      end
    end.to_h
  end

  # The modules each module may use, from its header; nil when the header
  # has no such line (or more than one, or one that does not parse).
  def declared(header_text)
    lines = header_text.lines.take_while { |line| line.start_with?("//!") || line.strip.empty? }
    found = lines.filter_map { |line| line[MAY_USE, 1] }
    return nil unless found.size == 1

    list = found.first
    return [] if list == "nothing."
    return nil unless list.match?(/\A(crate::\w+)(, crate::\w+)*\.\z/)

    list.delete_suffix(".").split(", ").map { |item| item.delete_prefix("crate::") }
  end

  def declarations
    headers.transform_values { |header| declared(File.read(header)) }
  end

  # The Rust files of module `name`, relative to SRC.
  def files_of(name)
    return ["#{name}.rs"] if File.file?(File.join(SRC, "#{name}.rs"))

    Dir.glob("#{name}/**/*.rs", base: SRC).sort
  end

  def without_comments(text)
    text.gsub(%r{/\*.*?\*/}m, "").gsub(%r{//.*$}, "")
  end

  # The crate's top-level modules that `code` (comments removed) names.
  def modules_named(code)
    names = code.scan(/\bcrate::(\w+)/).flatten
    code.scan(/\bcrate::\{([^}]*)\}/).each do |(group)|
      names.concat(group.split(",").map { |item| item.strip[/\A\w+/] }.compact)
    end
    names.uniq
  end

  # The `super::` chains of the file at `path` (relative to SRC) that climb
  # out of its top-level module. After an inline `mod tests {` a chain is one
  # level deeper (a file's unit tests come last).
  def climbing_out(path, code)
    depth = path.delete_suffix(".rs").delete_suffix("/mod").split("/").size
    outer, inner = code.split(/^\s*mod \w+ \{/, 2)
    [[outer, depth], [inner.to_s, depth + 1]].flat_map do |part, levels|
      part.scan(/\b((?:super::)+)/).map { |(chain)| chain.scan("super::").size }.select { |k| k >= levels }
    end
  end

  # ["engine/driver.rs names crate::findings", ...] for module `name`, whose
  # files are {path => text}; `allowed` is its declared list.
  def violations(name, texts, allowed)
    texts.flat_map do |path, text|
      code = without_comments(text)
      named = modules_named(code)
      named.concat(code.scan(/^\s*(?:pub(?:\([\w:]+\))?\s+)?mod (\w+);/).flatten) if name == "lib"
      forbidden = named.uniq.reject { |used| used == name || allowed.include?(used) }
      forbidden.map { |used| "#{path} uses crate::#{used}" } +
        climbing_out(path, code).map { |k| "#{path} climbs out with #{"super::" * k}" }
    end
  end

  def shown(name)
    File.directory?(File.join(SRC, name)) ? "#{name}/" : "#{name}.rs"
  end

  def test_every_module_states_what_it_may_use
    found = declarations
    assert_operator found.size, :>=, 11, "ext/ruzzy/src is where it was expected"
    missing = found.select { |_, list| list.nil? }.keys
    assert_empty missing, "a module without one `//! May use: crate::a, crate::b.` (or `nothing.`) line in its header"
    unknown = found.flat_map { |name, list| (list || []).reject { |used| found.key?(used) && used != name } }
    assert_empty unknown, "May use lines name modules that do not exist"
  end

  def test_no_module_uses_what_it_may_not
    found = declarations
    wrong = found.flat_map do |name, list|
      texts = files_of(name).to_h { |path| [path, File.read(File.join(SRC, path))] }
      violations(name, texts, list || [])
    end
    assert_empty wrong, "imports a module's May use line does not allow: move the code down, or invert the " \
                        "call (a hook registered at start-up), rather than widen the line"
  end

  def test_the_check_finds_a_forbidden_import
    texts = { "coverage/hook.rs" => <<~RUST }
      //! Mentions crate::engine in a comment only.
      use crate::process::target_state;
      use crate::{rb, findings};
      fn f() { crate::engine::driver::fuzz(); /* crate::input */ super::super::lib(); }
    RUST
    assert_equal ["coverage/hook.rs uses crate::engine", "coverage/hook.rs uses crate::findings",
                  "coverage/hook.rs climbs out with super::super::"],
                 violations("coverage", texts, %w[process rb])
    assert_empty violations("coverage", { "coverage/hook.rs" => "use super::locator;\n" }, [])
    assert_equal ["coverage/mod.rs climbs out with super::"],
                 violations("coverage", { "coverage/mod.rs" => "use super::engine;\n" }, [])
  end

  def test_the_may_use_lines_order_the_modules_in_floors
    found = floors(declarations)
    assert_equal 1, found.fetch("error")
    assert_equal found.values.max, found.fetch("lib"), "lib.rs stands above every module"
    assert_raises(Minitest::Assertion) { floors({ "a" => ["b"], "b" => ["a"] }) }
  end

  def test_the_architecture_doc_draws_the_floors_the_may_use_lines_make
    expected = picture(floors(declarations))
    drawn = File.read(DOC)[/^## Floors\n.*?```text\n(.*?)\n```/m, 1]
    refute_nil drawn, "docs/architecture.md has a `## Floors` section with a ```text picture"
    assert_equal expected, drawn, "docs/architecture.md's floors, as the May use lines make them"
  end
end

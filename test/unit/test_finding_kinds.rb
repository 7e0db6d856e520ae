# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"
require "ruzzy/findings/identity"
require "ruzzy/campaign/supervisor"

# The kinds of finding (crash-, timeout-, oom-...) and the Ruby names the
# native code uses are defined once: the native extension reads them when it
# loads and refuses to load when they do not match, and the Ruby code that
# recognises artifacts and reports derives from the same table.
class TestFindingKinds < Minitest::Test
  include RuzzyTestHelper

  KINDS = Ruzzy::Findings::KINDS
  SHA1 = "ad211d9480cf1780fbd131d785c837b5c27def96"

  def test_the_native_code_knows_exactly_the_kinds_the_ruby_code_defines
    assert_equal KINDS.keys.sort, Ruzzy::Native::FINDING_KINDS.sort
    assert_equal %w[crash- leak- oom- slow-unit- timeout-], KINDS.values.map(&:prefix).sort
  end

  def test_a_campaign_files_the_artifact_of_every_kind_that_ends_a_run_and_no_other
    artifact = Ruzzy::Campaign::ArtifactFiling::ARTIFACT
    KINDS.each_value do |kind|
      assert_equal kind.ends_run?, artifact.match?("#{kind.prefix}#{SHA1}"), kind.name
    end
    %w[crash- timeout- oom- leak-].each { |prefix| assert_match artifact, "#{prefix}#{SHA1}" }
    ["slow-unit-#{SHA1}", "minimized-from-#{SHA1}", "crash-#{SHA1}.txt", "crash-"].each do |name|
      refute_match artifact, name
    end
  end

  def test_a_report_of_each_kind_is_grouped_by_its_headline
    KINDS.each_value.select(&:headline).each do |kind|
      report = "==7== ERROR: #{kind.reporter}: #{kind.headline} (detail)\n    #0 0x1 in parse /src/p.c:3:1\n"
      assert_equal kind.group, Ruzzy::Findings::Identity.of_report(report).kind, kind.name
    end
    {
      "==7== ERROR: libFuzzer: deadly signal" => "signal",
      "==7== ERROR: libFuzzer: timeout after 3 seconds" => "timeout",
      "==7== ERROR: libFuzzer: out-of-memory (used: 600Mb; exceeds: 512Mb)" => "oom",
      "==7==ERROR: LeakSanitizer: detected memory leaks" => "leak",
      "==7== ERROR: libFuzzer: fuzz target exited" => "exit"
    }.each do |line, group|
      assert_equal group, Ruzzy::Findings::Identity.of_report("#{line}\n").kind, line
    end
  end

  def test_the_exit_statuses_of_findings_are_the_kinds_ones
    assert_equal [Ruzzy::EXIT_FINDING, Ruzzy::EXIT_TIMEOUT, Ruzzy::EXIT_OUT_OF_MEMORY].sort,
                 Ruzzy::Findings::Reproduction::FINDING_STATUSES.sort
  end

  def test_every_tag_and_class_the_native_code_names_is_defined
    refute_empty Ruzzy::Native::ERROR_TAGS
    Ruzzy::Native::ERROR_TAGS.each do |name|
      assert_includes Ruzzy.const_get(name, false).ancestors, Ruzzy::Error, name
    end
    assert_includes Ruzzy::Native::CALLED_CLASSES, "Ruzzy::Findings::Report"
    Ruzzy::Native::CALLED_CLASSES.each { |path| assert_kind_of Module, Object.const_get(path), path }
  end

  # What the native code names but the Ruby files lack (an extension and
  # lib/ from different versions) makes `require "ruzzy"` fail at once,
  # saying what is missing.
  def test_require_fails_loudly_when_a_name_the_native_code_needs_is_missing
    {
      "Ruzzy.send(:remove_const, :AlreadyFuzzingError)" =>
        %r{LoadError.*Ruzzy::AlreadyFuzzingError.*lib/ruzzy/error\.rb},
      "Ruzzy::Findings.send(:remove_const, :KINDS)\nRuzzy::Findings::KINDS = kinds.except(:oom)" =>
        /LoadError.*KINDS has no kind :oom/,
      "Ruzzy::Findings.send(:remove_const, :KINDS)\nRuzzy::Findings::KINDS = kinds.merge(hang: kinds[:timeout])" =>
        /LoadError.*KINDS has the kind :hang, which the extension does not know/
    }.each do |change, message|
      script = <<~RUBY
        require "ruzzy/native"
        kinds = Ruzzy::Findings::KINDS
        #{change}
        begin
          require "ruzzy"
        rescue LoadError => e
          puts "LoadError: \#{e.message}"
          exit 1
        end
      RUBY
      result = ruby("-W0", "-e", script)
      assert_equal 1, result.exitstatus, result.output
      assert_match message, result.stdout
    end
  end
end

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
  GROUP_KINDS = Ruzzy::Findings::GROUP_KINDS
  SHA1 = "ad211d9480cf1780fbd131d785c837b5c27def96"
  LIB = File.join(RuzzyTestHelper::ROOT, "lib")
  # Where the group kinds are spelt: the one file a kind may be a string in.
  TABLE = "ruzzy/finding_kinds.rb"

  # A group kind named by its key: GROUP_KINDS.fetch(:name), GROUP_KINDS[:name],
  # GROUP_KINDS.values_at(:a, :b).
  NAMED = /GROUP_KINDS(?:\.fetch\(|\[|\.values_at\()([^)\]]*)/
  # A kind compared (or made) as a string of its own: == "x", "x" !=,
  # when "x", %w[x y].include?, ["x"].include?, Identity.new("x", ...).
  COMPARED = [
    /(?:==|!=|===)\s*"(\w+)"/,
    /"(\w+)"\s*(?:==|!=|===)/,
    /\bwhen\s+((?:"\w+"(?:,\s*)?)+)/,
    /%w\[([^\]]*)\]\s*\.(?:include\?|member\?)/,
    /\[((?:\s*"\w+",?)+)\]\s*\.(?:include\?|member\?)/,
    /Identity\.new\(\s*"(\w+)"/
  ].freeze

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

  # ["12: exception", ...]: the group kinds +text+ (Ruby code) compares
  # as strings of its own, by line.
  def loose_kinds(text)
    text.each_line.with_index(1).flat_map do |line, number|
      next [] if line.strip.start_with?("#")

      words = COMPARED.flat_map { |pattern| line.scan(pattern).flatten.compact }.flat_map { |found| found.scan(/\w+/) }
      words.select { |word| GROUP_KINDS.value?(word) }.map { |word| "#{number}: #{word}" }
    end
  end

  def lib_files
    Dir.glob("**/*.rb", base: LIB).sort.to_h { |path| [path, File.read(File.join(LIB, path))] }
  end

  # A group's kind is spelt once, in GROUP_KINDS: elsewhere in lib/ it is
  # named by its key, never compared as a string (which a typo would turn
  # into a comparison that is never true).
  def test_no_group_kind_is_compared_as_a_string_outside_the_table
    assert_operator lib_files.size, :>, 50, "lib/ is where it was expected"
    loose = lib_files.except(TABLE).flat_map { |path, text| loose_kinds(text).map { |found| "#{path}:#{found}" } }
    assert_empty loose, "group kinds compared as strings: name them by their key (GROUP_KINDS.fetch(:name))"
  end

  def test_the_check_finds_a_kind_compared_as_a_string
    code = <<~RUBY
      # kind == "exception" in a comment is no comparison
      next if group.kind == "exception"
      return x if "asan" != kind
      return ruby_exception(kind) if %w[exception detector].include?(kind)
      when "timeout", "oom" then 1
      Identity.new("crash", "crash", "gone")
      args.given?("timeout") && group.kind == GROUP_KINDS.fetch(:exception)
    RUBY
    assert_equal ["2: exception", "3: asan", "4: exception", "4: detector", "5: timeout", "5: oom", "6: crash"],
                 loose_kinds(code)
  end

  # Every kind named by its key in lib/ is in the table, every kind of
  # KINDS is a group kind, and every report's identity has one.
  def test_every_group_kind_named_or_made_is_in_the_table
    named = lib_files.values.flat_map { |text| text.scan(NAMED).flatten.flat_map { |keys| keys.scan(/:(\w+)/) } }
    refute_empty named
    assert_empty named.flatten.map(&:to_sym).uniq - GROUP_KINDS.keys, "keys of GROUP_KINDS named in lib/ that it lacks"
    assert_empty KINDS.values.filter_map(&:group) - GROUP_KINDS.values
    reports = [
      "==7== ERROR: ruzzy: uncaught Ruby exception in the fuzz target\nE: x\nDEDUP_TOKEN: E--a.rb:f\n",
      "==7== ERROR: ruzzy: bug detector sql_injection fired in the fuzz target at q\nDEDUP_TOKEN: D--a.rb:f\n",
      "==7==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n",
      "/src/a.c:1:2: runtime error: signed integer overflow\n",
      "==7== ERROR: libFuzzer: fuzz target exited\n",
      "==7== ERROR: libFuzzer: something else\n",
      "==7==AddressSanitizer: nested bug in the same thread, aborting.\n",
      "no report at all\n",
      *KINDS.each_value.select(&:headline).map { |kind| "==7== #{kind.error_line}\n" }
    ]
    kinds = reports.map { |report| Ruzzy::Findings::Identity.of_report(report).kind }
    assert_equal GROUP_KINDS.values.sort, kinds.uniq.sort, "a report of every kind, and only those"
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

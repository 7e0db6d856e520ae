# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestDetectors: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestDetectorsSearch < Minitest::Test
  # Example directory => the detector class that finds its bug.
  EXAMPLE_FINDINGS = {
    "command_injection" => "CommandInjection",
    "path_traversal" => "PathTraversal",
    "deserialization" => "Deserialization",
    "code_injection" => "CodeInjection",
    "redos" => "ReDoS",
    "regexp_injection" => "RegexpInjection",
    "ssrf" => "SSRF",
    "sql_injection" => "SQLInjection",
    "xpath_injection" => "XPathInjection",
    "ldap_injection" => "LDAPInjection",
    "xxe" => "XXE"
  }.freeze

  # How many inputs each safe twin runs: 20,000, but the SSRF one makes an
  # HTTP request per input (about 120 a second on a busy machine).
  SAFE_RUNS = Hash.new(20_000).merge("ssrf" => 2_000).freeze

  EXAMPLE_FINDINGS.each do |example, detector|
    define_method("test_finds_the_#{example}_example") do
      in_tmpdir do |dir|
        result = ruzzy(File.join(DETECTORS, example, "fuzz.rb"), "-seed=1", "-max_total_time=200", chdir: dir)
        assert_exit 77, result
        assert_match(/ERROR: ruzzy: bug detector #{example} fired in the fuzz target/, result.stderr)
        assert_match(/^Ruzzy::Detectors::#{detector}: /, result.stderr)
        assert_match(/^DEDUP_TOKEN: Ruzzy::Detectors::#{detector}--/, result.stderr)

        replay = ruzzy(File.join(DETECTORS, example, "fuzz.rb"), *artifacts(dir), chdir: dir)
        assert_exit 77, replay
        assert_equal result.stderr[/^DEDUP_TOKEN: .*$/], replay.stderr[/^DEDUP_TOKEN: .*$/]
      end
    end

    define_method("test_the_safe_#{example}_has_nothing_to_find") do
      in_tmpdir do |dir|
        result = ruzzy(File.join(DETECTORS, example, "fuzz_safe.rb"), "-seed=1", "-runs=#{runs(SAFE_RUNS[example])}",
                       chdir: dir)
        assert_exit 0, result
        assert_empty artifacts(dir)
      end
    end
  end

  # Marshal, eval, const_get, JSON additions and a String literal broken
  # out of in eval'd code: other sinks than the examples', solved with the
  # guidance alone.
  {
    "marshal" => ["begin; Marshal.load(data); rescue StandardError; end", "Deserialization"],
    "eval" => ["begin; eval(data) if data.match?(/\\Aru[a-z]{0,3}\\z/); rescue NameError; end", "CodeInjection"],
    "const_get" => ["begin; Object.const_get(data) if data.match?(/\\A[A-Z][A-Za-z]*\\z/); rescue NameError; end",
                    "CodeInjection"],
    "json_additions" => ["begin; JSON.parse(data, create_additions: true); " \
                         "rescue JSON::ParserError, ArgumentError, NoMethodError, TypeError; end", "Deserialization",
                         "require 'json'"],
    # Input inside a String literal of eval'd code must break out of it;
    # the code runs in a BasicObject, where only the canary can be called.
    "eval_string_breakout" => ["begin; Box.new.instance_eval(\"'\#{data}'\") if data.match?(/\\A[a-z'+]{0,16}\\z/); " \
                               "rescue ::StandardError, ::ScriptError; end", "CodeInjection",
                               "class Box < BasicObject; def ruzzy(*) = ::Object.new.ruzzy; end"],
    # Template injection: input pasted into a template's text runs as code
    # (the canary method, or the canary command in backquotes).
    "erb_template" => ["begin; ERB.new(\"<p>Hello \#{data}</p>\").result; rescue StandardError, ScriptError; end",
                       "CodeInjection|CommandInjection", "require 'erb'"],
    "nokogiri_xpath" => ["begin; NOKO.at_xpath(\"//u[@name='\#{data}']\"); " \
                         "rescue Nokogiri::XML::XPath::SyntaxError, ArgumentError; end", "XPathInjection",
                         "require 'nokogiri'; NOKO = Nokogiri::XML('<us><u name=\"a\"/></us>')"],
    "erubi_template" => ["begin; eval(Erubi::Engine.new(\"<p>Hello \#{data}</p>\").src); " \
                         "rescue StandardError, ScriptError; end", "CodeInjection|CommandInjection", "require 'erubi'"]
  }.each do |name, (body, detector, prelude)|
    define_method("test_finds_input_reaching_#{name}") do
      in_tmpdir do |dir|
        write_harness(dir, "#{prelude}\nRuzzy.fuzz(->(data) { #{body}; nil })")
        result = ruzzy("harness.rb", "-seed=1", "-runs=2000000", "-max_total_time=200", chdir: dir)
        assert_exit 77, result
        assert_match(/^Ruzzy::Detectors::(?:#{detector}): /, result.stderr)
      end
    end
  end
end

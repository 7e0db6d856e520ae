# frozen_string_literal: true

require_relative "../test_helper"
require "tempfile"

# Every Ruby file of lib/ requires what it uses: required alone, in a
# process that has loaded nothing of ruzzy, it loads without a NameError or
# LoadError and without a circular require, every constant it names
# resolves, and one public module function of each module it defines can
# be called without a NameError or NoMethodError (test/support/
# lone_require.rb says how). A file that works only because ruzzy.rb
# happened to load another first fails here, as does a function that
# reaches for what its file does not load (Ruzzy.session).
class TestLibFilesLoadAlone < Minitest::Test
  # The lib/ that `require "ruzzy"` loads in this run: the checkout's
  # (in-tree build), else the installed gem's.
  LIB = File.dirname(Gem.find_files("ruzzy.rb").first)
  RUNNER = File.join(RuzzyTestHelper::ROOT, "test", "support", "lone_require.rb")

  # Programs, not libraries: run as `ruby FILE ARGS`, never required.
  PROGRAMS = ["ruzzy/cli/cov/replay.rb"].freeze

  # One call per module (or class) with public module functions, by the
  # file that defines them: "Ruzzy::Mod.function" => its arguments, as Ruby
  # source. Each is chosen to do nothing outside the process (no fuzzing,
  # no hooks installed, no file written, nothing started).
  CALLS = {
    # ruzzy.rb, guidance.rb
    "Ruzzy.session" => "",
    "Ruzzy.guide_equal" => "1, 1, 0",
    "Ruzzy::Guidance.guide_equal" => "1, 1, 0",
    # campaign/, campaign_protocol.rb
    "Ruzzy::Campaign::AloneCheck.news" => "Struct.new(:group, :outcome).new('g', 'fails'), 'dir'",
    "Ruzzy::Campaign::ArtifactFiling.internal_error_note" => "'log.txt'",
    "Ruzzy::Campaign::CorpusDirs.given" => "['prog']",
    "Ruzzy::Campaign::Display.title" => "Struct.new(:title, :site, :alone).new('t', nil, nil), {}",
    "Ruzzy::Campaign::HangCheck.news" => "Struct.new(:suspect, :outcome, :detail).new(nil, :not_run, 'x'), 1",
    "Ruzzy::Campaign::ProgressLog.read" => "'/nonexistent'",
    "Ruzzy::Campaign::Worker.count" => "nil, Class.new { def value(_name) = nil }.new",
    "Ruzzy::Campaign::WorkerOutput.named" => "'/nonexistent', []",
    "Ruzzy::Campaign.parse_reached" => "'x'",
    # cli/
    "Ruzzy::Cov::NativeCoverage.parse" => "''",
    "Ruzzy::Cov::ProgressPlot.from" => "'/nonexistent'",
    "Ruzzy::Cov::Replayer.filter" => "'a.rb'",
    "Ruzzy::Cov::Report.add_counts" => "{ lines: [], branches: {} }, { lines: [], branches: {} }",
    "Ruzzy::OssFuzz::Platform.runtime_options" => "nil",
    "Ruzzy::OssFuzz::Preloads.version" => "'/nonexistent/clang'",
    "Ruzzy::OssFuzz::SeedCorpus.end_record" => "0, 0, 0",
    "Ruzzy::CommandOptions.default_workers" => "",
    # detectors.rb, detectors/
    "Ruzzy::Detectors.names" => "",
    "Ruzzy::Detectors.shown" => "'x'",
    "Ruzzy::Detectors::CodeInjection.check_constant" => "'String'",
    "Ruzzy::Detectors::CommandInjection.canary?" => "'ls'",
    "Ruzzy::Detectors::Deserialization.canary_class" => "",
    "Ruzzy::Detectors::LDAPInjection.injected?" => "'(cn=x)'",
    "Ruzzy::Detectors::PathTraversal.escapes?" => "'a/b'",
    "Ruzzy::Detectors::ReDoS.describe" => "/a+/",
    "Ruzzy::Detectors::RegexpInjection.failed" => "RegexpError.new('x')",
    "Ruzzy::Detectors::ShellCommand.commands" => "'ls -l'",
    "Ruzzy::Detectors::SQLInjection.injected?" => "'SELECT 1'",
    "Ruzzy::Detectors::SSRF.rules" => "",
    "Ruzzy::Detectors::XPathInjection.injected?" => "'/a'",
    "Ruzzy::Detectors::XXE.before" => "'<a/>', nil",
    # engine/
    "Ruzzy::Engine::Choice.canonical" => "'libfuzzer'",
    "Ruzzy::Engine::HangWatch.loop_frames" => "",
    "Ruzzy::Relaunch.shell" => "['ruby', 'a b.rb']",
    # error.rb, exit_status.rb, settings.rb, finding_kinds.rb and the
    # other facts
    "Ruzzy::Error.text" => "'x'",
    "Ruzzy::Findings.hang?" => "'timeout'",
    "Ruzzy::LibFuzzerArgs.flag_name" => "'-runs=1'",
    "Ruzzy::NameList.parse" => "'a', %i[a b], option: '--x', kind: 'thing'",
    "Ruzzy::Native.dir" => "",
    "Ruzzy::Platforms.local" => "",
    "Ruzzy::ShownDuration.of" => "1.5",
    "Ruzzy::ShownPath.of" => "'/tmp/x'",
    "Ruzzy::UserCode.include?" => "'/tmp/x.rb'",
    # extensions/
    "Ruzzy::Extensions::Check.load_error_hint" => "LoadError.new('x')",
    "Ruzzy::Extensions::LoadedCheck.suspects" => "[]",
    "Ruzzy::Extensions::SharedObject.elf64_le?" => "'x'",
    # feedback/
    "Ruzzy::CompareHooks.groups" => "true",
    "Ruzzy::Coverage.running?" => "",
    "Ruzzy::LiteralDictionary.environment_setting" => "",
    "Ruzzy::Coverage::PendingAutoloads.paths" => "",
    # findings/
    "Ruzzy::Findings.context" => "",
    "Ruzzy::Findings::NoHangWatch.ready_to_name?" => "",
    "Ruzzy::ExpectedExceptions.from_command_line" => "'ArgumentError'",
    "Ruzzy::Findings::BugShape.cycle" => "%w[a b]",
    "Ruzzy::Findings::Identity.of_report" => "'==1== ERROR: libFuzzer: deadly signal'",
    "Ruzzy::Findings::Minimiser.options" => "[]",
    "Ruzzy::Findings::Outcome.dedup_token" => "RuntimeError.new",
    "Ruzzy::Findings::Report.ignored?" => "RuntimeError.new",
    "Ruzzy::Findings::Reproduction.minimise_line" => "'/tmp/f', 'exception-0123456789'",
    "Ruzzy::Findings::RubyFrames.normalize_frame" => "'a.rb:1:in f'",
    # gen.rb, gen/
    "Ruzzy::Gen.integer" => "0..3",
    "Ruzzy::Gen::BytesGen.shorter" => "'abc'",
    "Ruzzy::Gen::IntegerGen.toward" => "5, 0",
    "Ruzzy::Gen::Literal.literal?" => "1",
    "Ruzzy::Gen::Schema.of" => "[]",
    "Ruzzy::Gen::TypedTarget.assertion?" => "RuntimeError.new",
    # sanitizers.rb, sanitizers/
    "Ruzzy::Sanitizers.canonical" => "'asan'",
    "Ruzzy::ClangRuntime.target_arch" => "'/nonexistent/clang'",
    # test_frameworks/
    "Ruzzy::FuzzTest.slug" => "'a test'",
    "Ruzzy::FuzzTest::TypedFuzzTest.as_input" => "[1], 'x'",
    # web.rb, web/
    "Ruzzy::Web.app_expression" => "Object.new",
    "Ruzzy::Web.escape" => "'a b'",
    "Ruzzy::Web::AppLoader.sinatra_app" => "",
    "Ruzzy::Web::Names.of_code" => "'x = 1'",
    "Ruzzy::Gen.request" => "routes: ['GET /']",
    "Ruzzy::Web::RequestGen.header_name" => "'x-a'",
    "Ruzzy::Web::Routes.parse" => "['GET /']"
  }.freeze

  def files
    Dir.glob("**/*.rb", base: LIB).sort - PROGRAMS
  end

  # Runs the check on +paths+, the table of calls being +calls+; one result
  # (a Hash) per path.
  def check(paths, calls = CALLS)
    Tempfile.create("calls") do |table|
      table.write(calls.map { |name, arguments| "#{name}\t#{arguments}\n" }.join)
      table.close
      stdout, stderr, status = Open3.capture3({ "LONE_REQUIRE_CALLS" => table.path },
                                              "timeout", "-s", "KILL", "300", RbConfig.ruby, "-I", LIB, RUNNER, *paths)
      assert status.success?, "the check failed: #{stderr}"
      stdout.lines.map { |line| JSON.parse(line) }
    end
  end

  def test_each_file_loads_alone_and_resolves_the_constants_it_names
    assert_operator files.size, :>, 50, "lib/ is where it was expected: #{LIB}"
    results = check(files.map { |file| File.join(LIB, file) })
    assert_equal files.size, results.size
    failures = results.filter_map do |result|
      problems = [result["error"], *result["unresolved"], *result["circular"]].compact
      "#{result["file"].delete_prefix("#{LIB}/")}: #{problems.join("; ")}" unless problems.empty?
    end
    assert_empty failures, "files that do not require what they use (unresolved constants, with their line)"
    uncalled = results.flat_map { |result| result["uncalled"].map { |name| "#{name} (#{result["file"]})" } }
    assert_empty uncalled, "modules with public module functions but no call in CALLS: add one"
    failed = results.flat_map { |result| result["failed"] }
    assert_empty failed, "module functions that raise a NameError when their file is required alone"
  end

  # The check finds what it is there to find: a constant from a file not
  # required, one named only inside a method, a circular require, a module
  # function that reaches for a method its file does not load, and a
  # module with no call in the table.
  def test_the_check_reports_what_a_file_does_not_require
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "a.rb"), "require_relative 'b'\nmodule Ruzzy; A = 1; end\n")
      File.write(File.join(dir, "b.rb"), "require_relative 'a'\nmodule Ruzzy; def self.b = Session.new; end\n")
      File.write(File.join(dir, "c.rb"), "module Ruzzy; C = Findings::Report; end\n")
      File.write(File.join(dir, "d.rb"), "module Ruzzy; module D; def self.d(x) = Ruzzy.session.x; end; end\n")
      File.write(File.join(dir, "e.rb"), "module Ruzzy; module E; def self.e = 1; end; end\n")
      a, b, c, d, e = check(%w[a b c d e].map { |name| File.join(dir, "#{name}.rb") }, { "Ruzzy::D.d" => "1" })
      assert_match(/circular require/, a["circular"].join)
      assert_equal ["Session (line 2)"], b["unresolved"]
      assert_match(/NameError: uninitialized constant Ruzzy::Findings\b/, c["error"])
      assert_match(/\ARuzzy::D\.d\(1\): NoMethodError: undefined method [`']session'/, d["failed"].join)
      assert_equal [["Ruzzy::E"], []], [e["uncalled"], e["failed"]]
    end
  end
end

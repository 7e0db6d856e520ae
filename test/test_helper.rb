# frozen_string_literal: true

# The native test probes (Ruzzy::Native._counters_hit, _probe_iseq, ...)
# exist only under this switch; child processes inherit it.
ENV["RUZZY_TEST_PROBES"] = "1"
# A campaign's workers default to one per core; the suite runs several test
# files at once, so each campaign gets one worker unless its test asks for
# more (--workers, -fork, -jobs; test/integration/test_workers.rb).
ENV["RUZZY_WORKERS"] = "1"

# With an in-tree build (bin/compile), the tests and every process they
# start run this checkout: exe/ first on PATH, lib/ first on the load path.
# RUZZY_TEST_INSTALLED=1 (bin/rubies test) runs them against the installed
# gem instead.
TREE_LIB = File.expand_path("../lib", __dir__)
TREE_BUILD = File.join(TREE_LIB, "ruzzy", RUBY_VERSION[/\A\d+\.\d+/], "ruzzy_ext.so")
if ENV["RUZZY_TEST_INSTALLED"] != "1" && File.file?(TREE_BUILD)
  require_relative "support/freshness"
  newer = Freshness.changed_since(Freshness::NATIVE_SOURCES, File.mtime(TREE_BUILD))
  abort "test_helper: #{newer} is newer than the in-tree build #{TREE_BUILD}: run bin/compile" if newer
  ENV["PATH"] = [File.expand_path("../exe", __dir__), ENV.fetch("PATH", nil)].compact.join(File::PATH_SEPARATOR)
  ENV["RUBYLIB"] = [TREE_LIB, ENV.fetch("RUBYLIB", nil)].compact.reject(&:empty?).join(File::PATH_SEPARATOR)
  $LOAD_PATH.unshift(TREE_LIB)
end

require "minitest/autorun"
require "json"
require "open3"
require "tmpdir"
require "fileutils"

# Helpers for tests that run ruzzy in a child process. Every fuzzing run is
# bounded (-runs or -max_total_time) and seeded; a hard `timeout` guards
# against a hang.
module RuzzyTestHelper
  ROOT = File.expand_path("..", __dir__)
  EXAMPLES = File.join(ROOT, "examples")
  FIXTURES = File.join(ROOT, "test", "fixtures")
  DETECTORS = File.join(EXAMPLES, "detectors")
  SOLVE = File.join(ROOT, "bench", "solve")
  # RUZZY_TEST_GC_STRESS=1 (rake test:gc_stress) runs each generated
  # harness's target under GC.stress, where native-boundary bugs show up.
  GC_STRESS = ENV["RUZZY_TEST_GC_STRESS"] == "1"
  HARD_TIMEOUT = 300
  # The line above the fuzz target's Ruby backtrace in a crash, timeout or
  # sanitizer report.
  RUBY_BACKTRACE = /^==ruzzy== Ruby backtrace of the fuzz target.*\n/

  # A harness with a few branches and a KeyError behind "KEY" (the workflow
  # tests, integration and search).
  BRANCHY = <<~RUBY
    Ruzzy.fuzz(lambda do |data|
      case data.getbyte(0)
      when 1 then :one
      when 2 then :two
      when 3 then data.getbyte(1) == 7 ? :deep : :shallow
      end
      raise KeyError, "bad key \#{data.bytesize}" if data.start_with?("KEY") && data.bytesize > 6
      nil
    end)
  RUBY

  # Output and status of a finished child process.
  Result = Struct.new(:stdout, :stderr, :status) do
    def output
      stdout + stderr
    end

    def exitstatus
      status.exitstatus
    end
  end

  # Runs +command+; its output as UTF-8 with any byte that is not valid
  # UTF-8 replaced (a report may quote the input's raw bytes, and a Regexp
  # raises on a String with invalid bytes).
  def run_command(*command, chdir: Dir.pwd, env: {})
    stdout, stderr, status = Open3.capture3(env, "timeout", "-s", "KILL", HARD_TIMEOUT.to_s, *command,
                                            chdir:)
    Result.new(*[stdout, stderr].map { |text| text.force_encoding(Encoding::UTF_8).scrub }, status)
  end

  def ruzzy(*args, chdir: Dir.pwd, env: {})
    run_command("ruzzy", *args, chdir:, env:)
  end

  def ruby(*args, chdir: Dir.pwd, env: {})
    run_command(RbConfig.ruby, *args, chdir:, env:)
  end

  # Fuzzes bench/solve/NAME.rb in +dir+ with seed 1 for at most +inputs+
  # inputs (ruzzy's +flags+ before it); returns the result.
  def solve(dir, name, inputs, *flags, env: {})
    ruzzy(*flags, File.join(SOLVE, "#{name}.rb"), "-seed=1", "-runs=#{inputs}", chdir: dir, env:)
  end

  # Writes a harness that requires ruzzy and runs +body+; returns its path.
  def write_harness(dir, body, name: "harness.rb")
    path = File.join(dir, name)
    stress = GC_STRESS ? "GC.stress = true\n" : ""
    File.write(path, "require \"ruzzy\"\n#{stress}#{body}\n")
    path
  end

  # Matches a backtrace frame's label on every Ruby: `name' (3.1, 3.3) or
  # 'Owner#name' (3.4).
  def label(name)
    /in [`'](?:[A-Z][\w:]*[#.])?#{Regexp.escape(name)}'/
  end

  def in_tmpdir(&)
    Dir.mktmpdir("ruzzy-test", &)
  end

  # The groups of the findings directory +findings+ in +dir+: each
  # group.json's fields, and its name.
  def list_groups(dir, findings = "ruzzy-findings")
    Dir.glob(File.join(dir, findings, "*", "group.json")).map do |path|
      JSON.parse(File.read(path), symbolize_names: true).merge(name: File.basename(File.dirname(path)))
    end
  end

  def artifacts(dir, prefix = "crash-")
    Dir.children(dir).select { |name| name.start_with?(prefix) }.sort
  end

  def assert_exit(expected, result)
    tail = result.output[-4000..] || result.output
    assert_equal expected, result.exitstatus,
                 "expected exit #{expected}, got #{result.status.inspect}\n--- output ---\n#{tail}"
  end

  # Compiles a one-file C extension with clang and the given sanitizer (plus
  # libFuzzer's coverage instrumentation) into +dir+; returns its path.
  def build_c_extension(dir, source, sanitize:)
    config = RbConfig::CONFIG
    output = File.join(dir, "#{File.basename(source, ".c")}.so")
    command = ["clang", "-shared", "-fPIC", "-O1", "-g", "-fno-omit-frame-pointer",
               "-fsanitize=#{sanitize},fuzzer-no-link", "-I#{config["rubyhdrdir"]}", "-I#{config["rubyarchhdrdir"]}",
               source, "-o", output, "-L#{config["libdir"]}", *config["LIBRUBYARG_SHARED"].split]
    out, status = Open3.capture2e(*command)
    raise "building #{source} failed:\n#{out}" unless status.success?

    output
  end

  # Compiles a one-file C extension with the system's cc and no sanitizer
  # (it loads without a preload); returns its path.
  def build_plain_extension(dir, source = File.join(FIXTURES, "c_ext", "faults.c"))
    config = RbConfig::CONFIG
    output = File.join(dir, "#{File.basename(source, ".c")}.so")
    command = ["cc", "-shared", "-fPIC", "-O1", "-g", "-I#{config["rubyhdrdir"]}", "-I#{config["rubyarchhdrdir"]}",
               source, "-o", output, "-L#{config["libdir"]}", *config["LIBRUBYARG_SHARED"].split]
    out, status = Open3.capture2e(*command)
    raise "building #{source} failed:\n#{out}" unless status.success?

    output
  end

  # A test that needs something the machine may lack (clang's runtimes, a
  # browser): skipped on a developer's machine, a failure in CI, where a
  # missing prerequisite must never pass silently.
  def prerequisite!(present, missing)
    return if present

    flunk "prerequisite missing in CI: #{missing}" if ENV["CI"] == "true"
    skip missing
  end

  # Whether the install built the sanitizer preloads (clang was there).
  def sanitizers_built?
    require "ruzzy/sanitizers"
    File.file?(Ruzzy::Sanitizers.path("address")) && File.file?(Ruzzy::Sanitizers.path("undefined"))
  end

  # Runs under GC.stress are much slower; scale fuzzing budgets down.
  def runs(count)
    GC_STRESS ? [count / 50, 20].max : count
  end
end

Minitest::Test.include(RuzzyTestHelper)

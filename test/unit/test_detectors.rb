# frozen_string_literal: true

require_relative "../test_helper"

# The bug detectors (docs/detectors.md): each example app's bug is found,
# its safe twin is not, the hooks change nothing else, and the findings can
# be replayed, silenced and turned off.
class TestDetectors < Minitest::Test
  # The command injection example reaches Kernel#system with and without
  # the detectors; the sandbox must keep every command from running. A
  # `ping` first on PATH would leave a mark.
  def test_the_examples_never_run_a_command
    in_tmpdir do |dir|
      bin = File.join(dir, "bin")
      FileUtils.mkdir_p(bin)
      mark = File.join(dir, "ran")
      File.write(File.join(bin, "ping"), "#!/bin/sh\necho \"$@\" >> #{mark}\n")
      File.chmod(0o755, File.join(bin, "ping"))
      ruzzy_path = ENV.fetch("PATH").split(File::PATH_SEPARATOR).map { |path| File.join(path, "ruzzy") }
                      .find { |path| File.executable?(path) }
      env = { "PATH" => "#{bin}:#{ENV.fetch("PATH")}" }
      harness = File.join(DETECTORS, "command_injection", "fuzz.rb")
      assert_exit 0, run_command(ruzzy_path, "--disable-detectors=all", harness, "-seed=1", "-runs=#{runs(5000)}",
                                 chdir: dir, env:)
      run_command(ruzzy_path, harness, "-seed=1", "-runs=#{runs(5000)}", chdir: dir, env:)
      system(env, "ping", "-c", "1", "probe", exception: true)
      assert_equal "-c 1 probe\n", File.read(mark), "only the test's own probe ran ping"
    end
  end

  def test_sinks_behave_as_without_detectors
    plain = ruby(File.join(FIXTURES, "detectors", "sinks.rb"))
    assert_exit 0, plain
    fuzzed = ruby(File.join(FIXTURES, "detectors", "sinks.rb"), "fuzz")
    assert_exit 0, fuzzed
    assert_equal plain.stdout, fuzzed.stdout
    assert_match(/^system array: true$/, plain.stdout)
    assert_match(%r{^read: "\.\./ruzzy /ruzzy"$}, plain.stdout)
  end

  def test_a_rescue_does_not_hide_a_finding_and_ignore_silences_it
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        ignore = ENV["IGNORE"] ? [Ruzzy::Detectors::CommandInjection] : nil
        Ruzzy.fuzz(->(data) { begin; IO.popen("echo;ruzzy"); rescue Exception; end; nil }, ignore:)
      RUBY
      found = ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_exit 77, found
      assert_match(/IO.popen would run the command "ruzzy" in "echo;ruzzy"/, found.stderr)
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "IGNORE" => "1" })
      assert_exit 0, ruzzy("--ignore=Ruzzy::Detectors::CommandInjection", "harness.rb", "-runs=10", chdir: dir)
    end
  end

  def test_detectors_can_be_turned_off_by_name
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        setting = ENV["SETTING"] ? ENV["SETTING"].split(",").map(&:to_sym) : Ruzzy::Detectors.default_setting
        setting = false if ENV["SETTING"] == "false"
        Ruzzy.fuzz(->(data) { File.exist?("x") || Dir.children("/ruzzy") rescue nil; nil }, detectors: setting)
      RUBY
      assert_exit 77, ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("--disable-detectors=path_traversal", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("--disable-detectors=all", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "false" })
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "redos,command_injection" })
      assert_exit 77, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "path_traversal" })

      unknown = ruzzy("--disable-detectors=path,redos", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 2, unknown
      known = "command_injection, path_traversal, deserialization, code_injection, redos"
      assert_match(/unknown detector path \(known: #{known}\)/, unknown.stderr)
      keyword = ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "sql" })
      assert_exit 1, keyword
      assert_match(/detectors: unknown detector sql/, keyword.stderr)
    end
  end

  def test_list_detectors
    result = ruzzy("--list-detectors")
    assert_exit 0, result
    %w[command_injection path_traversal deserialization code_injection redos].each do |name|
      assert_match(/^  #{name}  +\S/, result.stdout)
    end
  end
end

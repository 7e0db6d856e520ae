# frozen_string_literal: true

require_relative "../test_helper"

# The precompiled gem on systems older than the one that built it.
# bin/abi-check, which `bin/platform-gem build` runs on every shared object
# the gem ships: a file linked against a newer glibc, libstdc++ or libruby
# must fail the build, a file within the baseline must pass. And where the
# extension still cannot load, `require "ruzzy"` says why and what to do.
class TestInstall < Minitest::Test
  include RuzzyTestHelper

  ABI_CHECK = File.join(ROOT, "bin", "abi-check")

  def shared_object(dir, name, source, *libs)
    path = File.join(dir, name)
    File.write("#{path}.c", source)
    result = run_command("clang", "-shared", "-fPIC", "-o", path, "#{path}.c", *libs)
    assert result.status.success?, result.output
    path
  end

  def test_newer_glibc_symbol_fails
    Dir.mktmpdir do |dir|
      # arc4random is versioned GLIBC_2.36: linked here, the file needs glibc 2.36.
      newer = shared_object(dir, "newer.so", "#include <stdlib.h>\nunsigned f(void) { return arc4random(); }\n")
      result = run_command(ABI_CHECK, newer)
      assert_equal 1, result.exitstatus, result.output
      assert_match(/FAIL .*newer\.so: .*GLIBC_2\.36/, result.output)
      assert_match(/needs GLIBC_2\.36 \(baseline: GLIBC_2\.31\)/, result.output)
    end
  end

  def test_libstdcxx_and_libruby_fail
    Dir.mktmpdir do |dir|
      cxx = shared_object(dir, "cxx.so", "int f(void) { return 1; }\n", "-Wl,--no-as-needed", "-lstdc++")
      result = run_command(ABI_CHECK, cxx)
      assert_equal 1, result.exitstatus, result.output
      assert_match(/needs libstdc\+\+\.so\.6/, result.output)

      # The Rubies the suite runs on are Debian's, built with --enable-shared.
      ruby = shared_object(dir, "ruby.so", "int f(void) { return 1; }\n", "-Wl,--no-as-needed",
                           "-L#{RbConfig::CONFIG["libdir"]}", "-l:#{RbConfig::CONFIG["LIBRUBY_SO"]}")
      result = run_command(ABI_CHECK, ruby)
      assert_equal 1, result.exitstatus, result.output
      assert_match(/needs libruby-\d\.\d\.so/, result.output)
    end
  end

  # The first symbol version of glibc on each architecture (puts has it).
  FIRST_GLIBC = { "x86_64" => "GLIBC_2.2.5", "aarch64" => "GLIBC_2.17" }.freeze

  def test_old_glibc_symbols_pass
    Dir.mktmpdir do |dir|
      plain = shared_object(dir, "plain.so", "#include <stdio.h>\nint f(void) { return puts(\"x\"); }\n")
      result = run_command(ABI_CHECK, plain)
      assert_equal 0, result.exitstatus, result.output
      first = Regexp.escape(FIRST_GLIBC.fetch(RbConfig::CONFIG["host_cpu"]))
      assert_match(/ok   .*plain\.so: #{first}; NEEDED libc\.so\.6/, result.output)
    end
  end

  # A precompiled layout (lib/ruzzy/<major.minor>/ruzzy_ext.so) whose
  # extension needs a library this system lacks, as one linked against a
  # newer glibc does.
  def test_unloadable_precompiled_extension_says_what_to_do
    Dir.mktmpdir do |dir|
      lib = File.join(dir, "lib")
      FileUtils.cp_r(File.join(ROOT, "lib"), lib)
      missing = shared_object(dir, "libruzzy-missing.so", "int g(void) { return 1; }\n")
      minor = RUBY_VERSION[/\A\d+\.\d+/]
      FileUtils.mkdir_p(File.join(lib, "ruzzy", minor))
      shared_object(File.join(lib, "ruzzy", minor), "ruzzy_ext.so", "int g(void);\nint f(void) { return g(); }\n",
                    "-L#{dir}", "-lruzzy-missing")
      File.delete(missing)
      result = run_command("ruby", "-I#{lib}", "-e", 'require "ruzzy"')
      refute result.status.success?
      assert_match(/LoadError/, result.stderr)
      assert_match(/ruzzy's native extension cannot be loaded: libruzzy-missing\.so: cannot open shared object/,
                   result.stderr)
      local = Regexp.escape(Gem::Platform.local.to_s)
      assert_match(/need x86_64 or aarch64 Linux with glibc 2\.31 or newer \(this is #{local}\); install the source/,
                   result.stderr)
      assert_match(/install the source gem instead.*rustup.*clang: /m, result.stderr)
      assert_match(/gem install ruzzy --platform ruby/, result.stderr)
    end
  end

  # The source gem on a system whose cargo is older than the crate needs
  # (Debian 12's apt cargo is 1.65): extconf.rb stops with what to do,
  # instead of cargo's "failed to parse lock file" inside gem_make.out.
  def test_old_cargo_gets_a_clear_message
    required = File.read(File.join(ROOT, "ext", "ruzzy", "Cargo.toml"))[/^rust-version = "(.*)"/, 1]
    Dir.mktmpdir do |dir|
      cargo = File.join(dir, "cargo")
      File.write(cargo, "#!/bin/sh\necho 'cargo 1.65.0 (4bc8f24d3 2022-10-20)'\n")
      File.chmod(0o755, cargo)
      result = run_command("ruby", File.join(ROOT, "ext", "ruzzy", "extconf.rb"), chdir: dir,
                                                                                  env: { "CARGO" => cargo })
      assert_equal 1, result.exitstatus, result.output
      refute File.exist?(File.join(dir, "Makefile"))
      assert_match(/no recent enough cargo: #{Regexp.escape(cargo)} \(cargo 1\.65\.0\)/, result.stderr)
      assert_match(/needs Rust #{Regexp.escape(required)} or newer/, result.stderr)
      assert_match(%r{rustup\s+\(https://rustup\.rs\)}, result.stderr)
      # The precompiled gem for this machine (x86_64-linux or aarch64-linux).
      assert_match(/gem install ruzzy --platform #{RbConfig::CONFIG["host_cpu"]}-linux$/, result.stderr)
    end
  end
end

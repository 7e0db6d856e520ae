# frozen_string_literal: true

require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"

# The tests that need ruzzy installed as a gem (`ruzzy oss-fuzz-build`
# copies the gem it runs from into $OUT): with RUZZY_TEST_INSTALLED=1
# (bin/rubies test), the gem installed by bin/setup; otherwise this
# checkout's in-tree build (bin/compile), packaged as the precompiled gem
# is (ruzzy.gemspec with RUZZY_PLATFORM) and installed into a gem home of
# its own under tmp/, so the quick loop tests the code it is looking at
# without compiling anything again. Must be required before test_helper.
module InstalledRuzzy
  ROOT = File.expand_path("../..", __dir__)
  MINOR = RUBY_VERSION[/\A\d+\.\d+/]
  BUILD = File.join(ROOT, "lib", "ruzzy", MINOR, "ruzzy_ext.so")
  GEM_HOME = File.join(ROOT, "tmp", "installed-#{MINOR}")
  STAMP = File.join(GEM_HOME, "installed-from")

  module_function

  # Makes every process the tests start find `ruzzy` as an installed gem.
  def use!
    return if ENV["RUZZY_TEST_INSTALLED"] == "1"

    unless File.file?(BUILD)
      abort "#{__FILE__}: no in-tree build #{BUILD}: run bin/compile (or set RUZZY_TEST_INSTALLED=1)"
    end
    install unless File.file?(STAMP) && File.read(STAMP) == fingerprint
    ENV["GEM_HOME"] = GEM_HOME
    ENV["GEM_PATH"] = [GEM_HOME, *Gem.path].uniq.join(File::PATH_SEPARATOR)
    ENV["PATH"] = [File.join(GEM_HOME, "bin"), ENV.fetch("PATH", nil)].compact.join(File::PATH_SEPARATOR)
    ENV["RUZZY_TEST_INSTALLED"] = "1"
  end

  # What the packaged gem was made from: every file it ships and its mtime.
  def fingerprint
    files = Dir.glob(%w[lib/**/* exe/* ruzzy.gemspec], base: ROOT).sort
    files.map { |file| "#{file} #{File.mtime(File.join(ROOT, file)).to_f}" }.join("\n")
  end

  # Two processes may install at once (bin/test-files runs test files in
  # parallel): a lock file keeps them apart. The gem is staged as
  # bin/platform-gem stages it, with this Ruby's native files only.
  def install
    FileUtils.mkdir_p(File.dirname(GEM_HOME))
    File.open("#{GEM_HOME}.lock", File::RDWR | File::CREAT) do |lock|
      lock.flock(File::LOCK_EX)
      next if File.file?(STAMP) && File.read(STAMP) == fingerprint

      stamp = fingerprint
      FileUtils.rm_rf(GEM_HOME)
      package = File.join(File.dirname(GEM_HOME), "ruzzy-tree-#{MINOR}.gem")
      Dir.mktmpdir("ruzzy-tree-gem") do |stage|
        stage_files(stage)
        run(stage, { "RUZZY_PLATFORM" => Gem::Platform.local.to_s },
            "gem", "build", "ruzzy.gemspec", "--output", package)
      end
      run(ROOT, { "GEM_HOME" => GEM_HOME, "GEM_PATH" => GEM_HOME },
          "gem", "install", "--local", "--no-document", package)
      File.write(STAMP, stamp)
    end
  end

  def stage_files(stage)
    spec = Dir.chdir(ROOT) { Gem::Specification.load("ruzzy.gemspec") }
    (spec.files + ["ruzzy.gemspec"] + Dir.glob("lib/ruzzy/#{MINOR}/*", base: ROOT)).each do |file|
      FileUtils.mkdir_p(File.dirname(File.join(stage, file)))
      FileUtils.cp(File.join(ROOT, file), File.join(stage, file))
    end
  end

  def run(dir, env, *command)
    output, status = Open3.capture2e(env, *command, chdir: dir)
    abort "#{__FILE__}: #{command.join(" ")} failed:\n#{output}" unless status.success?
  end
end

InstalledRuzzy.use!

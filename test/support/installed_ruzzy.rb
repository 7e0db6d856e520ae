# frozen_string_literal: true

require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "freshness"
require_relative "../../lib/ruzzy/platforms"

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
    install unless fresh?
    ENV["GEM_HOME"] = GEM_HOME
    ENV["GEM_PATH"] = [GEM_HOME, *Gem.path].uniq.join(File::PATH_SEPARATOR)
    ENV["PATH"] = [File.join(GEM_HOME, "bin"), ENV.fetch("PATH", nil)].compact.join(File::PATH_SEPARATOR)
    ENV["RUZZY_TEST_INSTALLED"] = "1"
  end

  # Whether the installed gem is as new as the files it ships: none changed
  # after the stamp's mtime (when they were staged), and they are the ones
  # the stamp lists (none added or removed).
  def fresh?
    File.file?(STAMP) && File.read(STAMP) == shipped &&
      !Freshness.changed_since(Freshness::GEM_SOURCES, File.mtime(STAMP))
  end

  def shipped
    Freshness.files(Freshness::GEM_SOURCES).join("\n")
  end

  # Two processes may install at once (bin/test-files runs test files in
  # parallel): a lock file keeps them apart. The gem is staged by
  # bin/stage-gem, as bin/platform-gem stages it, with this Ruby's native
  # files only.
  def install
    FileUtils.mkdir_p(File.dirname(GEM_HOME))
    File.open("#{GEM_HOME}.lock", File::RDWR | File::CREAT) do |lock|
      lock.flock(File::LOCK_EX)
      next if fresh?

      # A second early: a file's mtime comes from a coarser clock than Time.now.
      staged_at = Time.now - 1
      listed = shipped
      FileUtils.rm_rf(GEM_HOME)
      package = File.join(File.dirname(GEM_HOME), "ruzzy-tree-#{MINOR}.gem")
      Dir.mktmpdir("ruzzy-tree-gem") do |stage|
        run(ROOT, {}, RbConfig.ruby, File.join(ROOT, "bin", "stage-gem"), stage, "#{MINOR}=#{File.dirname(BUILD)}")
        run(stage, { "RUZZY_PLATFORM" => Ruzzy::Platforms.precompiled || Ruzzy::Platforms.local },
            "gem", "build", "ruzzy.gemspec", "--output", package)
      end
      run(ROOT, { "GEM_HOME" => GEM_HOME, "GEM_PATH" => GEM_HOME },
          "gem", "install", "--local", "--no-document", package)
      File.write(STAMP, listed)
      File.utime(staged_at, staged_at, STAMP)
    end
  end

  def run(dir, env, *command)
    output, status = Open3.capture2e(env, *command, chdir: dir)
    abort "#{__FILE__}: #{command.join(" ")} failed:\n#{output}" unless status.success?
  end
end

InstalledRuzzy.use!

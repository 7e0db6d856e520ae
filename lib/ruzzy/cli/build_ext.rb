# frozen_string_literal: true

require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "../command_options"
require_relative "../exit_status"
require_relative "../extensions/check"
require_relative "../extensions/toolchain"
require_relative "../error"

module Ruzzy
  # `ruzzy build-ext`: builds a C or C++ extension gem for fuzzing under a
  # sanitizer (Extensions::Toolchain says with what), then checks every
  # shared object it built (Extensions::Check): a build that would fuzz
  # blind or unchecked fails, naming the file and what it lacks.
  #
  #   ruzzy build-ext msgpack-1.4.2.gem --install-dir vendor/fuzz   # into a gem home
  #   ruzzy build-ext .                                             # a project, in place
  class BuildExt
    USAGE = <<~TEXT.freeze
      Usage: ruzzy build-ext GEM_OR_DIR [--install-dir DIR] [--sanitizer=NAME] [-O LEVEL] [-- BUILD_ARGS...]

      Builds a C or C++ extension for fuzzing: with clang (the one ruzzy's
      sanitizer preloads were built with), Ruby's own compile flags at -O LEVEL,
      the sanitizer and libFuzzer's coverage instrumentation. Then checks each
      shared object it built: compiled by clang, with the sanitizer's and
      SanitizerCoverage's calls, or the command fails naming the file.

      GEM_OR_DIR is one of:
        a .gem file        installed with `gem install --local` (into --install-dir, else
                           GEM_HOME; its dependencies must be installed)
        a gem name         the same, from your gem sources
        a directory        a project or unpacked gem: with --install-dir, `gem build`
                           of its gemspec then `gem install`; without, built in place
                           (each ext/**/extconf.rb; the .so files go into lib/)

        --install-dir=DIR  the gem home to install into; fuzz with GEM_PATH=DIR:...
        --sanitizer=NAME   address (asan, the default) or undefined (ubsan)
        -- BUILD_ARGS...   arguments for the extension's extconf.rb, as `gem install GEM --
                           BUILD_ARGS` passes them (--enable-system-libraries, --with-xxx-dir=DIR)
        -O LEVEL           optimisation: #{Extensions::Toolchain::LEVELS.join(", ")} (default #{Extensions::Toolchain::DEFAULT_LEVEL})

      When CFLAGS already asks for a sanitizer (OSS-Fuzz's and ClusterFuzzLite's
      build step), the builder's CC and flags are used, with libFuzzer's coverage
      and -fPIC added.

      Exit status: #{EXIT_OK} built and checked, #{EXIT_BUILD_FAILED} the build or the check failed, #{EXIT_USAGE} usage error.
    TEXT

    # RubyGems' `gem` command, run by this Ruby (the `gem` on PATH may be
    # another Ruby's).
    GEM = [RbConfig.ruby, "-e", "require 'rubygems/gem_runner'; Gem::GemRunner.new.run(ARGV.clone)", "--"].freeze

    # Where an in-place build keeps mkmf's Makefiles and objects.
    BUILD_DIR = File.join("tmp", "ruzzy-build-ext")

    # Raised when a step of the build fails; the message says which.
    class Failed < StandardError
      include Ruzzy::Error
    end

    def initialize(argv, out:, err:, env: ENV)
      @argv = argv.dup
      @out = out
      @err = err
      @env = env
    end

    def run
      source = parse or return EXIT_OK
      @toolchain = Extensions::Toolchain.new(sanitizer: @sanitizer, level: @level, env: @env)
      say "building with #{@toolchain.description}"
      built = build(source)
      raise Failed, "no compiled extension (.so) was built from #{source}: is it a C extension?" if built.empty?

      check(built)
    rescue Failed => e
      say e.message
      EXIT_BUILD_FAILED
    end

    private

    def parse
      split = @argv.index("--")
      @build_args = split ? @argv.drop(split + 1) : []
      @argv = @argv.take(split) if split
      parser = CommandOptions.parser("ruzzy build-ext")
      parser.on("--install-dir=DIR") { |dir| @install_dir = File.expand_path(dir) }
      parser.on("-O LEVEL") { |level| @level = level(level) }
      CommandOptions.sanitizer(parser) { |name| @sanitizer = name }
      return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE)
      raise CommandOptions::UsageError, "build-ext takes one gem, .gem file or directory" unless @argv.size == 1

      @argv.first
    end

    def level(text)
      text = text.delete_prefix("-O")
      return text if Extensions::Toolchain::LEVELS.include?(text)

      raise CommandOptions::UsageError,
            "build-ext: -O takes one of #{Extensions::Toolchain::LEVELS.join(", ")}, got #{text.inspect}"
    end

    # Builds +source+; returns the shared objects built.
    def build(source)
      if File.directory?(source)
        @install_dir ? install_project(File.expand_path(source)) : build_in_place(File.expand_path(source))
      elsif File.file?(source)
        unless source.end_with?(".gem")
          raise CommandOptions::UsageError, "build-ext: #{source} is neither a .gem file nor a directory"
        end

        install(File.expand_path(source))
      elsif source.include?("/") || source.end_with?(".gem")
        raise CommandOptions::UsageError, "build-ext: no such file or directory: #{source}"
      else
        install(source)
      end
    end

    # `gem install` of a .gem file (--local: its dependencies must be
    # installed already) or gem name; the shared objects of every gem it
    # installed.
    def install(gem)
      home = @install_dir || Gem.dir
      local = File.file?(gem) ? ["--local"] : []
      build_args = @build_args.empty? ? [] : ["--", *@build_args]
      output = command("gem install", *GEM, "install", gem, *local, "--no-document", "--no-user-install",
                       *build_args, env: gem_home(home))
      installed = output.scan(/^Successfully installed (\S+)$/).flatten
      raise Failed, "gem install #{gem} installed nothing:\n#{output}" if installed.empty?

      say "installed #{installed.join(", ")} into #{home}"
      installed.flat_map { |full_name| Dir.glob(File.join(home, "extensions", "*", "*", full_name, "**", "*.so")) }
    end

    # The environment that makes `gem install` install into +home+ and
    # take dependencies from +home+ and every directory of this Ruby's
    # Gem.path (Debian's packaged gems in /usr/share/rubygems-integration
    # among them). `gem install --install-dir DIR` would look for them
    # nowhere but in .gem files and remote sources: with --install-dir,
    # RubyGems' DependencyInstaller ignores every installed gem, so a
    # dependency installed by apt-get was "not found".
    def gem_home(home)
      { "GEM_HOME" => home, "GEM_PATH" => [home, *Gem.path].uniq.join(File::PATH_SEPARATOR) }
    end

    # `gem build` of the gemspec in +dir+ into a temporary .gem file, then
    # `gem install` of that.
    def install_project(dir)
      spec = gemspec(dir)
      Dir.mktmpdir("ruzzy-build-ext") do |work|
        gem = File.join(work, "#{File.basename(spec, ".gemspec")}.gem")
        command("gem build", *GEM, "build", File.basename(spec), "--output", gem, chdir: dir)
        install(gem)
      end
    end

    def gemspec(dir)
      specs = Dir.glob(File.join(dir, "*.gemspec"))
      return specs.first if specs.size == 1

      raise Failed, "#{dir} has several gemspecs: build-ext one .gem file" unless specs.empty?

      raise Failed, "#{dir} has no gemspec to build a gem from (leave out --install-dir to build it in place)"
    end

    # Each extconf.rb of the project in +dir+, built in tmp/ and installed
    # into its lib/, where `require` finds it with -I lib.
    def build_in_place(dir)
      extconfs = Dir.glob(File.join(dir, "ext", "**", "extconf.rb")) + Dir.glob(File.join(dir, "extconf.rb"))
      raise Failed, "#{dir} has no extconf.rb (in ext/ or at the top): nothing to compile" if extconfs.empty?

      extconfs.sort.flat_map { |extconf| build_one(extconf, dir) }
    end

    # One extconf.rb of the project in +dir+: mkmf and make in tmp/, make
    # install into lib/; the shared objects installed.
    def build_one(extconf, dir)
      lib = File.join(dir, "lib")
      build = File.join(dir, BUILD_DIR, File.dirname(extconf).delete_prefix(dir).delete_prefix("/"))
      FileUtils.rm_rf(build)
      FileUtils.mkdir_p(build)
      command("ruby #{extconf}", RbConfig.ruby, extconf, *@build_args, chdir: build)
      make = @toolchain.make.split
      command("make", *make, chdir: build)
      before = Dir.glob(File.join(lib, "**", "*.so")).to_h { |file| [file, File.mtime(file)] }
      command("make install", *make, "install", "sitearchdir=#{lib}", "sitelibdir=#{lib}", "DESTDIR=", chdir: build)
      Dir.glob(File.join(lib, "**", "*.so")).reject { |file| before[file] == File.mtime(file) }
         .each { |file| say "built #{file}" }
    end

    def check(built)
      unless @toolchain.sanitizer
        say "built #{built.size} shared object(s) for a build without a fuzzing sanitizer: nothing to check"
        return EXIT_OK
      end

      problems = Extensions::Check.report(built, @toolchain.sanitizer)
      if problems.empty?
        say "checked #{built.size} shared object(s): clang, #{@toolchain.sanitizer} sanitizer, SanitizerCoverage"
        return EXIT_OK
      end

      say "these shared objects are not built for fuzzing:"
      problems.each { |line| @err.puts "  #{line}" }
      flags = @toolchain.builder? ? "with the builder's flags, " : ""
      say "their C code would be fuzzed #{flags}blind or unchecked; see docs/c-extensions.md (\"What build-ext does\")"
      EXIT_BUILD_FAILED
    end

    # Runs a build step in the toolchain's environment; returns its output,
    # raises Failed with the output's end when it fails.
    def command(step, *words, chdir: Dir.pwd, env: {})
      output, status = Open3.capture2e(@toolchain.environment.merge(env), *words, chdir:)
      return output if status.success?

      raise Failed, "#{step} failed (exit #{status.exitstatus}):\n#{output.lines.last(30).join}"
    rescue SystemCallError => e
      raise Failed, "#{step} could not run: #{e.message}"
    end

    def say(line)
      @err.puts "ruzzy build-ext: #{line}"
    end
  end
end

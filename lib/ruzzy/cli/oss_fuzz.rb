# frozen_string_literal: true

require "fileutils"
require "rbconfig"
require "shellwords"
require_relative "../command_options"
require_relative "oss_fuzz/platform"
require_relative "oss_fuzz/preloads"
require_relative "oss_fuzz/seed_corpus"
require_relative "../own_files"
require_relative "../version"

module Ruzzy
  # `ruzzy oss-fuzz-build`: turns harnesses into what OSS-Fuzz and
  # ClusterFuzzLite run, executable fuzz targets in $OUT.
  #
  #   ruzzy oss-fuzz-build fuzz/fuzz_*.rb -I lib          # in build.sh: $OUT and $SANITIZER
  #
  # For each harness it writes $OUT/NAME (a launcher the platforms' scripts
  # find, check and run), NAME.options, and NAME_seed_corpus.zip and NAME.dict
  # when asked; it copies the harness's directory (or --root) and the -I
  # directories into $OUT/NAME.src, and the installed gems, ruzzy included,
  # once into $OUT/ruzzy-gems, and rebuilds the copy's sanitizer preload
  # with the build's clang ($CC). Nothing in $OUT refers to the build machine
  # but the Ruby interpreter, which the runner images share with the builder;
  # $OUT can be moved.
  class OssFuzz
    USAGE = <<~TEXT
      Usage: ruzzy oss-fuzz-build HARNESS.rb... [--out=DIR] [-I DIR]... [--root=DIR]
                                  [--sanitizer=NAME] [--name=NAME] [--seed-corpus=DIR]
                                  [--dict=FILE]

        --out=DIR          where the targets go (default: $OUT)
        -I DIR             add DIR to the load path (copied into $OUT)
        --root=DIR         copy DIR, not the harness's directory, as the target's sources
        --sanitizer=NAME   address, undefined, coverage, introspector or none (default:
                           $SANITIZER, else none); memory is refused
        --name=NAME        the target's name (one harness only; default: the harness's)
        --seed-corpus=DIR  zip DIR into NAME_seed_corpus.zip
        --dict=FILE        copy FILE to NAME.dict
        --copy-gems        accepted for compatibility: the gems are always copied
    TEXT

    # Where the gems go in $OUT, shared by every target.
    GEMS_DIR = "ruzzy-gems"

    # Parts of a gem directory a runner never needs.
    SKIPPED_GEM_PARTS = %w[cache doc].freeze

    def initialize(argv, out:, err:, env: ENV)
      @argv = argv.dup
      @out = out
      @err = err
      @env = env
      @includes = []
      @sanitizer = env.fetch("SANITIZER", nil)
      @sanitizer = nil if @sanitizer&.empty?
    end

    def run
      harnesses = parse
      return 0 unless harnesses

      gem_path = copy_gems
      rebuild_preloads if @preload
      harnesses.each { |harness| build(harness, gem_path) }
      0
    end

    private

    def parse
      parser = CommandOptions.parser("oss-fuzz-build")
      parser.on("--out=DIR") { |dir| @dir = dir }
      parser.on("--name=NAME") { |name| @name = name }
      parser.on("--root=DIR") { |dir| @root = dir }
      parser.on("--copy-gems") { nil }
      parser.on("--seed-corpus=DIR") { |dir| @seed_corpus = dir }
      parser.on("--dict=FILE") { |file| @dict = file }
      parser.on("--sanitizer=NAME") { |name| @sanitizer = name }
      parser.on("-I DIRECTORY") { |dir| @includes << dir }
      return nil if CommandOptions.parse!(parser, @argv, out: @out, usage: USAGE)

      check(@argv)
    end

    def check(harnesses)
      check_harnesses(harnesses)
      @dir ||= @env.fetch("OUT", nil)
      if @dir.to_s.empty?
        raise CLI::UsageError,
              "oss-fuzz-build needs --out=DIR or $OUT (the platform's output directory)"
      end

      @dir = File.expand_path(@dir)
      check_inputs
      @preload = @sanitizer && OssFuzz::Platform.preload_for(@sanitizer)
      Sanitizers.path!(@preload) if @preload
      harnesses
    rescue InvalidArgumentsError => e
      raise CLI::UsageError, "oss-fuzz-build: #{e.message}"
    end

    def check_harnesses(harnesses)
      raise CLI::UsageError, "oss-fuzz-build needs a harness" if harnesses.empty?
      if @name && harnesses.size > 1
        raise CLI::UsageError, "oss-fuzz-build: --name takes one harness, got #{harnesses.size}"
      end

      missing = harnesses.reject { |harness| File.file?(harness) }
      raise CLI::UsageError, "oss-fuzz-build: no such harness file: #{missing.join(", ")}" unless missing.empty?
    end

    def check_inputs
      [*@includes, *@root, *@seed_corpus].each do |dir|
        raise CLI::UsageError, "oss-fuzz-build: no such directory: #{dir}" unless File.directory?(dir)
      end
      raise CLI::UsageError, "oss-fuzz-build: no such dictionary: #{@dict}" if @dict && !File.file?(@dict)
    end

    def build(harness, gem_path)
      name = @name || File.basename(harness, ".rb")
      root = File.expand_path(@root || File.dirname(harness))
      source = File.join(@dir, "#{name}.src")
      FileUtils.rm_rf(source)
      copy_tree(root, source)
      includes = @includes.each_with_index.map { |dir, index| include_path(dir, index, root, source) }
      harness_path = relative_to(File.expand_path(harness), root) || copy_outside(harness, source)
      write_launcher(name, harness_path, includes, gem_path)
      write_extras(name)
      @out.puts "ruzzy oss-fuzz-build: wrote #{File.join(@dir, name)}"
    end

    # Copies the directory +from+ into +to+, leaving out $OUT when it lies
    # inside +from+ (--out=DIR in the harness's directory).
    # Symbolic links are copied as links, as `cp -r DIR/.` would.
    def copy_tree(from, to)
      out = File.realpath(@dir)
      FileUtils.mkdir_p(to)
      Dir.children(from).each do |child|
        path = File.join(from, child)
        real = File.symlink?(path) ? nil : File.realpath(path)
        next if real == out

        if real && File.directory?(path) && out.start_with?("#{real}/")
          copy_tree(path, File.join(to, child))
        else
          FileUtils.cp_r(path, to, dereference_root: false)
        end
      end
    end

    def write_launcher(name, harness, includes, gem_path)
      launcher = File.join(@dir, name)
      File.write(launcher, script(name, harness, includes, gem_path))
      File.chmod(0o755, launcher)
    end

    # NAME.options always (the sanitizer options, for ClusterFuzz, which
    # reads the file itself), NAME.dict and the seed corpus when asked.
    def write_extras(name)
      options = OssFuzz::Platform.options_file(@preload)
      options_path = File.join(@dir, "#{name}.options")
      options.empty? ? FileUtils.rm_f(options_path) : File.write(options_path, options)
      FileUtils.cp(@dict, File.join(@dir, "#{name}.dict")) if @dict
      return unless @seed_corpus

      count = OssFuzz::SeedCorpus.write(@seed_corpus, File.join(@dir, "#{name}_seed_corpus.zip"))
      @out.puts "ruzzy oss-fuzz-build: #{count} seed input(s) in #{name}_seed_corpus.zip"
    end

    # +path+ relative to +root+, or nil when it is outside.
    def relative_to(path, root)
      path.start_with?("#{root}/") ? path.delete_prefix("#{root}/") : nil
    end

    def copy_outside(file, source)
      FileUtils.cp(file, source)
      File.basename(file)
    end

    # Where -I directory +dir+ is inside the copy (copied in if outside root).
    def include_path(dir, index, root, source)
      inside = relative_to(File.expand_path(dir), root)
      return inside if inside

      target = File.join(".deps", index.to_s)
      copy_tree(File.expand_path(dir), File.join(source, target))
      target
    end

    # Copies every gem directory outside $OUT into $OUT/ruzzy-gems (the
    # runner images have neither the builder's gem directories nor
    # RubyGems' GEM_PATH); returns the target's gem path, relative to the
    # launcher's directory. Gem directories already inside $OUT (the base
    # image's GEM_HOME=$OUT/fuzz-gem) stay where they are.
    def copy_gems
      target = File.join(@dir, GEMS_DIR)
      FileUtils.rm_rf(target)
      FileUtils.mkdir_p(target)
      inside = []
      Gem.path.uniq.select { |dir| File.directory?(dir) }.each do |dir|
        dir = File.expand_path(dir)
        relative = relative_to(dir, @dir)
        next inside << relative if relative

        Dir.children(dir).reject { |part| SKIPPED_GEM_PARTS.include?(part) }.each do |part|
          FileUtils.cp_r(File.join(dir, part), target)
        end
      end
      [GEMS_DIR, *inside]
    end

    # The ruzzy gem's directory inside $OUT (relative): in the gem copy, or
    # in the gem directory inside $OUT that holds it.
    def ruzzy_gem_dir
      spec = running_gem
      base = relative_to(File.expand_path(spec.base_dir), @dir) || GEMS_DIR
      [File.join(base, "gems", spec.full_name), spec]
    end

    # The installed ruzzy gem this ruzzy runs from: copying another one (an
    # older install beside a checkout's exe/ruzzy) would ship other code.
    def running_gem
      specs = [Gem.loaded_specs["ruzzy"], *Gem::Specification.find_all_by_name("ruzzy")].compact
      spec = specs.find { |candidate| File.expand_path("lib", candidate.full_gem_path) == LIB_DIR }
      return spec if spec

      raise CLI::UsageError, "oss-fuzz-build: this ruzzy runs from #{LIB_DIR}, which is not an installed gem " \
                             "(a checkout?), so it cannot be copied: gem build and gem install it, then run " \
                             "that gem's ruzzy"
    end

    def ruzzy_exe
      dir, spec = ruzzy_gem_dir
      File.join(dir, spec.bindir, "ruzzy")
    end

    # Rebuilds the preloads of the copy in $OUT with the build's clang.
    def rebuild_preloads
      dir, spec = ruzzy_gem_dir
      native = relative_to(File.expand_path(Sanitizers.native_dir), File.expand_path(spec.full_gem_path))
      return unless native

      @out.puts "ruzzy oss-fuzz-build: #{Preloads.rebuild(File.join(@dir, dir, native), @env)}"
    end

    def environment_lines(gem_path)
      lines = [
        %(export GEM_HOME="$here/#{GEMS_DIR}"),
        %(export GEM_PATH="#{gem_path.map { |dir| "$here/#{dir}" }.join(":")}")
      ]
      OssFuzz::Platform.runtime_options(@preload).each do |variable, options|
        lines << %(export #{variable}="${#{variable}:+$#{variable}:}#{options}")
      end
      lines
    end

    def script(name, harness, includes, gem_path)
      options = @preload ? ["--sanitizer=#{@preload}"] : []
      includes = includes.map { |dir| %(-I "$here/#{name}.src/#{dir}") }
      command = [%("$ruby"), %("$here/#{ruzzy_exe}"), *options, *includes, %("$here/#{name}.src/#{harness}"), '"$@"']
      <<~SH
        #!/bin/sh
        # #{OssFuzz::Platform::MARKER} for fuzzer detection.
        # Written by `ruzzy oss-fuzz-build` (ruzzy #{VERSION}): runs #{harness} with ruzzy
        # (sanitizer: #{@preload || "none"}) and the libFuzzer flags it is given. Everything it
        # uses is in its own directory, wherever that is moved, but for Ruby itself.
        here=$(cd "$(dirname "$0")" && pwd)
        ruby=#{RbConfig.ruby.shellescape}
        [ -x "$ruby" ] || ruby=ruby
        #{environment_lines(gem_path).join("\n")}
        exec #{command.join(" ")}
      SH
    end
  end
end

# frozen_string_literal: true

require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "../sanitizers"
require_relative "clang_runtime"
require_relative "../settings"

module Ruzzy
  # Builds the native pieces that need clang and its sanitizer runtimes into
  # an output directory:
  #
  #   asan_with_fuzzer.so   AddressSanitizer + libFuzzer, to LD_PRELOAD
  #   ubsan_with_fuzzer.so  UndefinedBehaviorSanitizer + libFuzzer, to LD_PRELOAD
  #   dummy.so              Ruzzy.dummy's C extension (ASan, heap-use-after-free)
  #   sanitizers.txt        what was built, or what is missing and how to get it,
  #                         and the clang it was built with (`ruzzy build-ext` uses it)
  #
  # Run at `gem install` by ext/ruzzy/build_sanitizers.rb, and by `ruzzy
  # oss-fuzz-build` with the build's own clang, so the preloaded runtime is
  # the one that instrumented the project's C extensions. Never raises for a
  # missing or failing clang: the status lines say what happened.
  class SanitizerBuild
    INSTALL_HINT = "install clang and its sanitizer runtimes (Debian/Ubuntu: apt-get install clang " \
                   "libclang-rt-14-dev), then reinstall ruzzy (gem pristine ruzzy)"
    LIBS = %w[-lpthread -ldl -lrt -lm -lstdc++].freeze
    # Keeps a preload built against a new glibc loading and working on
    # glibc 2.31 (see the file).
    GLIBC_COMPAT = File.expand_path("preload_glibc_compat.c", __dir__)

    # The runtime's default options: Sanitizers::PRELOAD_DEFAULTS and where
    # this machine's llvm-symbolizer is (see the file).
    OPTIONS = File.expand_path("preload_options.c", __dir__)

    # Prints a Ruby exception finding's frames where the preload's libFuzzer
    # prints the native stack (see the file).
    FRAME_PRINTER = File.expand_path("preload_frames.c", __dir__)

    # The gate put in front of libFuzzer's hooks that only feed its value
    # profile (see the file), which lists them (GATED_HOOKS); libFuzzer's
    # own are renamed with GATED_PREFIX in the preload's copy of its archive.
    COMPARE_GATE = File.expand_path("preload_compare_gate.c", __dir__)
    GATED_HOOKS = File.read(COMPARE_GATE).scan(/^RUZZY_GATED_HOOK1?\((\w+),/).flatten.freeze
    GATED_PREFIX = "ruzzy_libfuzzer_"

    # libFuzzer's custom mutator and crossover hooks, forwarding to ruzzy_ext's
    # (see the file).
    CUSTOM_MUTATOR = File.expand_path("preload_custom_mutator.c", __dir__)

    # dummy: also build Ruzzy.dummy's extension (needs ext/dummy/dummy.c and
    # this Ruby's headers). quiet: do not print the status lines.
    def initialize(output_dir, clang: ENV.fetch(Settings::CLANG, "clang"), dummy: true, quiet: false)
      @output = File.expand_path(output_dir)
      @clang = clang
      @dummy = dummy
      @quiet = quiet
      @status = []
    end

    # The status lines ("built: NAME", "missing: ...", "failed: ...").
    attr_reader :status

    def run
      FileUtils.mkdir_p(@output)
      Dir.mktmpdir("ruzzy-sanitizers") do |work|
        @work = work
        build_all if clang_found?
      end
      File.write(File.join(@output, Sanitizers::STATUS_FILE), "#{@status.join("\n")}\n")
      puts @status unless @quiet
      self
    end

    # Whether every preload was built.
    def preloads_built?
      Sanitizers::FILES.values.all? { |file| @status.include?("built: #{file}") }
    end

    private

    def build_all
      fuzzer = runtime("fuzzer_no_main")
      asan = runtime("asan")
      ubsan = runtime("ubsan_standalone")
      build_preload("address", [asan, runtime("asan_cxx"), fuzzer], "asan_preinit", "__asan_default_options")
      build_preload("undefined", [ubsan, runtime("ubsan_standalone_cxx"), fuzzer],
                    "ubsan_init_standalone_preinit", "__ubsan_default_options")
      Sanitizers::SHARED_RUNTIMES.each_value do |shared|
        path = runtime(shared[:name], ext: "so")
        @status << "#{shared[:label]} #{path}" if path
      end
      build_dummy if @dummy
    end

    def clang_found?
      _, status = Open3.capture2e(@clang, "--version")
      if status.success?
        @status << "#{Sanitizers::CLANG_LABEL} #{absolute(@clang)}"
        return true
      end

      @status << "missing: clang (#{@clang}); #{INSTALL_HINT}"
      false
    rescue SystemCallError
      @status << "missing: clang (#{@clang}); #{INSTALL_HINT}"
      false
    end

    # +command+ as a path (found on PATH when it names no directory).
    def absolute(command)
      return File.expand_path(command) if command.include?("/")

      found = ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, command) }
      found.find { |path| File.file?(path) && File.executable?(path) } || command
    end

    # The binutils program NAME for clang's target: a cross-compiling clang
    # (--target=aarch64-linux-gnu) names aarch64-linux-gnu-NAME, whose ar
    # indexes and objcopy rewrites that target's objects; the host's cannot.
    def tool(name)
      @tools ||= {}
      @tools[name] ||= ClangRuntime.output(@clang, "-print-prog-name=#{name}") || name
    end

    # Path of a compiler-rt archive (or with ext: "so" shared runtime), or nil.
    def runtime(name, ext: "a")
      ClangRuntime.find(@clang, name, ext:)
    end

    def build_preload(sanitizer, archives, preinit, options_symbol)
      name = Sanitizers::FILES.fetch(sanitizer)
      defaults = Sanitizers::PRELOAD_DEFAULTS.fetch(sanitizer)
      runtime_archive, *rest = archives
      if runtime_archive.nil? || rest.last.nil?
        @status << "missing: #{name}: the sanitizer runtime or libFuzzer archive; #{INSTALL_HINT}"
        return
      end
      # The runtime's pre-init object goes in .preinit_array, which a shared
      # object may not have; the preload initialises on first use instead.
      copy = File.join(@work, File.basename(runtime_archive))
      FileUtils.cp(runtime_archive, copy)
      ar = tool("ar")
      members, = Open3.capture2(ar, "t", copy)
      members.lines.map(&:strip).grep(/\A#{preinit}/).each { |member| system(ar, "d", copy, member) }
      *others, fuzzer = rest.compact
      gated = gated_fuzzer(fuzzer)
      compile(name, "-shared", "-fPIC", "-O2", "-o", File.join(@output, name),
              "-DRUZZY_OPTIONS_FUNCTION=#{options_symbol}", %(-DRUZZY_DEFAULT_OPTIONS="#{defaults}"), OPTIONS,
              FRAME_PRINTER, GLIBC_COMPAT, CUSTOM_MUTATOR,
              *(gated ? ["-DRUZZY_GATED_PREFIX=#{GATED_PREFIX}", COMPARE_GATE] : []),
              "-Wl,--wrap=__sanitizer_print_stack_trace", "-Wl,--wrap=__sanitizer_set_death_callback",
              "-Wl,--whole-archive", copy, *others, gated || fuzzer, "-Wl,--no-whole-archive", *LIBS)
    end

    # A copy of libFuzzer's archive with the hooks of GATED_HOOKS renamed,
    # or nil (the preload then keeps libFuzzer's hooks as they are) when
    # objcopy cannot make it. Made once per archive and build.
    def gated_fuzzer(archive)
      @gated ||= {}
      return @gated[archive] if @gated.key?(archive)

      copy = File.join(@work, "gated-#{File.basename(archive)}")
      renames = GATED_HOOKS.flat_map { |hook| ["--redefine-sym", "#{hook}=#{GATED_PREFIX}#{hook}"] }
      _, status = Open3.capture2e(tool("objcopy"), *renames, archive, copy)
      @gated[archive] = status.success? ? copy : nil
    rescue SystemCallError
      @gated[archive] = nil
    end

    # Ruzzy.dummy's extension. Like ruzzy's own, it does not link libruby:
    # its Ruby symbols come from the process that loads it, so it also loads
    # into a Ruby built without --enable-shared (OSS-Fuzz's).
    def build_dummy
      source = File.expand_path("../../../ext/dummy/dummy.c", __dir__)
      config = RbConfig::CONFIG
      compile("dummy.so", "-shared", "-fPIC", "-O1", "-g", "-fsanitize=address,fuzzer-no-link",
              "-I#{config["rubyhdrdir"]}", "-I#{config["rubyarchhdrdir"]}", source,
              "-o", File.join(@output, "dummy.so"))
    end

    def compile(name, *args)
      output, status = Open3.capture2e(@clang, *args)
      @status << (status.success? ? "built: #{name}" : "failed: #{name}: #{output.lines.first(3).join.strip}")
    end
  end
end

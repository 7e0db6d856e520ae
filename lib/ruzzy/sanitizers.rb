# frozen_string_literal: true

# This file and every file of lib/ruzzy/sanitizers/ stand on one floor (docs/architecture.md):
# May use: error, native, settings.

require_relative "error"
require_relative "native"
require_relative "settings"

module Ruzzy
  # The sanitizer preload libraries built at `gem install` (when clang and
  # its runtimes were there): a sanitizer runtime and libFuzzer in one shared
  # object, meant for LD_PRELOAD. `ruzzy --sanitizer=NAME` arranges the
  # preload itself. This file does not load the native extension, so the
  # command can use it before re-executing itself.
  module Sanitizers
    DLEXT = "so"
    FILES = {
      "address" => "asan_with_fuzzer.#{DLEXT}",
      "undefined" => "ubsan_with_fuzzer.#{DLEXT}"
    }.freeze
    ALIASES = { "asan" => "address", "ubsan" => "undefined" }.freeze
    STATUS_FILE = "sanitizers.txt"
    # The status line naming the clang the preloads were built with, and
    # the lines that say something could not be built.
    CLANG_LABEL = "clang:"
    # For each sanitizer, the status line naming that clang's shared
    # runtime (preloaded behind LibAFL's runtime: --engine=libafl
    # --sanitizer=NAME) and the runtime's compiler-rt name.
    SHARED_RUNTIMES = {
      "address" => { label: "asan shared runtime:", name: "asan" },
      "undefined" => { label: "ubsan shared runtime:", name: "ubsan_standalone" }
    }.freeze
    PROBLEM = /\A(?:missing|failed):/

    # What a Ruby process needs from each runtime: no leak report at exit
    # (Ruby frees little then: every input would end in one), no alternate
    # signal stack (Ruby runs its own), null from a failed allocation rather
    # than an abort (Ruby raises NoMemoryError), UBSan stopping at the
    # first error, and SIGABRT left to libFuzzer (a Ruby exception finding
    # aborts; libFuzzer's handler prints its frames, see ext/ruzzy/src/findings/crash_frames.rs).
    # The launchers of `ruzzy oss-fuzz-build` append them to the runner's
    # ASAN_OPTIONS / UBSAN_OPTIONS, which would override them.
    RUBY_OPTIONS = {
      "address" => "detect_leaks=0:use_sigaltstack=0:allocator_may_return_null=1:handle_abort=0",
      "undefined" => "halt_on_error=1:use_sigaltstack=0:handle_abort=0"
    }.freeze
    # The preloads' built-in defaults (ASAN_OPTIONS / UBSAN_OPTIONS
    # override them): the above, libFuzzer's exit status for a crash,
    # UBSan's stack traces, and a DEDUP_TOKEN line of the top 3 frames in
    # every report (the identity that libFuzzer's -minimize_crash=1 keeps,
    # as ruzzy's own reports of Ruby exceptions do). The preload adds the
    # llvm-symbolizer it finds on the machine (sanitizers/preload_options.c).
    PRELOAD_DEFAULTS = {
      "address" => "#{RUBY_OPTIONS.fetch("address")}:exitcode=77:dedup_token_length=3",
      "undefined" => "#{RUBY_OPTIONS.fetch("undefined")}:print_stacktrace=1:exitcode=77:dedup_token_length=3"
    }.freeze

    module_function

    # The directory holding ruzzy's native files.
    # libFuzzer's -detect_leaks for this process: off (it would only print
    # that it gave up: Ruby holds on to memory it never frees) unless
    # ASAN_OPTIONS or LSAN_OPTIONS asks for leak detection.
    def leak_flags
      wanted = %w[ASAN_OPTIONS LSAN_OPTIONS].any? do |name|
        ENV.fetch(name, "").split(/[:\s]/).grep(/\Adetect_leaks=/).last == "detect_leaks=1"
      end
      wanted ? [] : ["-detect_leaks=0"]
    end

    def native_dir
      Native.dir || __dir__
    end

    # "address" or "undefined" for any accepted spelling; raises
    # InvalidArgumentsError for anything else.
    def canonical(name)
      name = ALIASES.fetch(name.to_s, name.to_s)
      return name if FILES.key?(name)

      raise InvalidArgumentsError,
            "unknown sanitizer #{name.inspect}; use one of #{(FILES.keys + ALIASES.keys).join(", ")}"
    end

    # Where the preload for +name+ is (whether or not it was built).
    def path(name)
      File.join(native_dir, FILES.fetch(canonical(name)))
    end

    # The preload for +name+; raises SanitizerUnavailableError, saying what
    # to install, when it was not built.
    def path!(name)
      file = path(name)
      return file if File.file?(file)

      raise SanitizerUnavailableError,
            "the #{canonical(name)} sanitizer preload (#{File.basename(file)}) was not built when ruzzy " \
            "was installed: #{build_report}"
    end

    # What the install-time build said it could not build.
    def build_report
      missing = status_lines.grep(PROBLEM)
      return missing.join("; ") unless missing.empty?

      "install clang and its sanitizer runtimes (Debian/Ubuntu: apt-get install clang " \
        "libclang-rt-14-dev), then reinstall ruzzy (gem pristine ruzzy)"
    end

    # The clang the preloads were built with (its runtime is the one
    # preloaded), or nil when they were not built.
    def clang
      status_value(CLANG_LABEL)
    end

    # That clang's shared runtime of +sanitizer+ ("address" or
    # "undefined"), or, when it is not on this machine (the precompiled gem
    # records the build machine's), that of the clang on PATH; nil when
    # there is none.
    def shared_runtime(sanitizer)
      runtime = SHARED_RUNTIMES.fetch(sanitizer)
      path = status_value(runtime[:label])
      return path if path && File.file?(path)

      require_relative "sanitizers/clang_runtime"
      ClangRuntime.find(ENV.fetch(Settings::CLANG, "clang"), runtime[:name], ext: "so")
    end

    # The value of the status line that starts with +label+, or nil.
    def status_value(label)
      line = status_lines.find { |text| text.start_with?(label) }
      line&.delete_prefix(label)&.strip
    end

    # The lines of the install-time build's status file.
    def status_lines
      status = File.join(native_dir, STATUS_FILE)
      File.file?(status) ? File.read(status).lines.map(&:strip).reject(&:empty?) : []
    end

    # Whether +file+ is in LD_PRELOAD.
    def preloaded?(file)
      ENV.fetch("LD_PRELOAD", "").split(/[:\s]+/).include?(file)
    end

    # The environment that preloads +file+ (in front of any existing preload).
    def preload_environment(file)
      existing = ENV.fetch("LD_PRELOAD", "")
      { "LD_PRELOAD" => existing.empty? ? file : "#{file}:#{existing}" }
    end
  end
end

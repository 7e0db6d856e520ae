# frozen_string_literal: true

require_relative "../error"
require_relative "../own_files"
require_relative "../settings"
require_relative "../libfuzzer_args"
require_relative "../native"
require_relative "../platforms"
require_relative "../sanitizers"
require_relative "../extensions/shared_object"

module Ruzzy
  # The engine: what runs the fuzzing loop (ext/ruzzy/src/engine/ on the
  # native side, which starts it).
  module Engine
    # The choice of engine, made before the native extension loads: LLVM's
    # libFuzzer (bundled, the default) or LibAFL's libFuzzer-compatible
    # runtime (`libafl_libfuzzer`; the native side tells them apart,
    # process/libfuzzer.rs), a shared object built at `gem install` when
    # asked for (RUZZY_LIBAFL=1) and always in the precompiled gem, preloaded
    # by `ruzzy --engine=libafl` or RUZZY_ENGINE=libafl; and what choosing
    # LibAFL's runtime takes: where it is, its preload environment, and
    # libFuzzer's flags as it takes them. This file does not load the native
    # extension, so the command can use it before re-executing itself.
    module Choice
      NAMES = %w[libfuzzer libafl].freeze
      DEFAULT = "libfuzzer"
      # The environment variable that picks the engine of Ruzzy.fuzz.
      ENV_NAME = Settings::ENGINE
      LIBAFL_FILE = "libafl_libfuzzer.so"
      # The install-time build's report (ext/ruzzy/build_libafl.rb).
      LIBAFL_STATUS_FILE = "libafl.txt"

      # LibAFL's runtime reads these libFuzzer flags the same way.
      LIBAFL_FLAGS = %w[artifact_prefix timeout dict use_value_profile malloc_limit_mb close_fd_mask help].freeze
      # ruzzy does these itself under LibAFL: it ends the run at -runs and
      # -max_total_time and at -rss_limit_mb (LibAFL's runtime is told no
      # limit), and writes the artifact of every finding
      # (-exact_artifact_path). It reports -timeout too, from LibAFL's timer.
      RUZZY_FLAGS = %w[runs max_total_time rss_limit_mb exact_artifact_path].freeze
      # Flags that change nothing under LibAFL and are left out: ruzzy's own
      # defaults, silently, and those LibAFL decides itself (its own random
      # seed, input size limit and mutations), with a line that says so.
      DEFAULT_FLAGS = %w[print_final_stats print_funcs detect_leaks].freeze
      DECIDED_FLAGS = %w[seed max_len len_control only_ascii].freeze
      # libFuzzer's modes that run child processes: LibAFL's runtime does
      # them by forking the process from C, which a Ruby interpreter does not
      # survive (refused, see #refusal).
      PARENT_MODES = LibFuzzerArgs::PARENT_FLAGS
      IGNORED_FLAGS = (DEFAULT_FLAGS + DECIDED_FLAGS).freeze

      # Under LibAFL's runtime, the sanitizers start with LibAFL's options
      # (abort_on_error=1, symbolize=0, no stack traces or allocation
      # contexts): ruzzy's preload defaults instead, and for AddressSanitizer
      # no complaint that its runtime comes second. For each sanitizer the
      # options variable and what goes in front of the user's own.
      SANITIZER_OPTIONS = {
        "address" => ["ASAN_OPTIONS", "verify_asan_link_order=0:abort_on_error=0:symbolize=1:malloc_context_size=30:" \
                                      "#{Sanitizers::PRELOAD_DEFAULTS.fetch("address")}"],
        "undefined" => ["UBSAN_OPTIONS",
                        "abort_on_error=0:symbolize=1:#{Sanitizers::PRELOAD_DEFAULTS.fetch("undefined")}"]
      }.freeze

      module_function

      # "libfuzzer" or "libafl"; raises InvalidArgumentsError for anything else.
      def canonical(name)
        name = name.to_s.downcase
        return name if NAMES.include?(name)

        raise InvalidArgumentsError, "unknown engine #{name.inspect}; use one of #{NAMES.join(", ")}"
      end

      # The engine RUZZY_ENGINE names (the default when unset or empty).
      def from_environment
        name = ENV.fetch(ENV_NAME, "")
        name.empty? ? DEFAULT : canonical(name)
      end

      # Where LibAFL's runtime is (whether or not it was built): among the
      # native files (a source install), or once in lib/ruzzy/ for every Ruby
      # (the precompiled gem); only in +dir+ when given.
      def libafl_path(dir = nil)
        dirs = dir ? [dir] : [Sanitizers.native_dir, File.join(LIB_DIR, "ruzzy")].uniq
        files = dirs.map { |place| File.join(place, LIBAFL_FILE) }
        files.find { |file| File.file?(file) } || files.first
      end

      # LibAFL's runtime; raises EngineUnavailableError, saying how to get it,
      # when it was not built, or was built for another machine (a gem
      # directory shared with a container of another architecture: the
      # dynamic loader would skip the preload with a warning, and libFuzzer
      # would run in its place).
      def libafl_path!(dir = nil)
        file = libafl_path(dir)
        unless File.file?(file)
          raise EngineUnavailableError,
                "the libafl engine (#{LIBAFL_FILE}) was not built when ruzzy was installed: #{libafl_report(dir)}"
        end
        other = Extensions::SharedObject.other_machine(file) or return file

        raise EngineUnavailableError, "the libafl engine's runtime #{file} was #{other}: #{libafl_report(dir)}"
      end

      # What the install-time build said, or how to ask for it.
      def libafl_report(dir = nil)
        status = File.join(dir || Sanitizers.native_dir, LIBAFL_STATUS_FILE)
        said = File.file?(status) ? File.read(status).strip : ""
        said.empty? || said == "built" ? libafl_report_default : said
      end

      # How to get LibAFL's runtime: the precompiled gem for this machine
      # carries it or not (Platforms::WITH_LIBAFL).
      def libafl_report_default(platform = Platforms.precompiled)
        toolchain = "Rust 1.93.1 or newer with rustup's llvm-tools component: rustup component add llvm-tools"
        if Platforms::WITH_LIBAFL.include?(platform)
          "reinstall ruzzy with RUZZY_LIBAFL=1 (#{toolchain}), or install the precompiled gem, which carries it"
        elsif platform
          "the #{platform} precompiled gem does not carry it: use the default engine (libfuzzer), or install " \
            "the source gem with RUZZY_LIBAFL=1 (gem install ruzzy --platform ruby; #{toolchain})"
        else
          "reinstall ruzzy with RUZZY_LIBAFL=1 (#{toolchain})"
        end
      end

      # The environment that preloads LibAFL's runtime in front of anything
      # else. With +sanitizer+ ("address" or "undefined"), the shared runtime
      # of that sanitizer of the clang ruzzy was built with follows it, with
      # SANITIZER_OPTIONS (the user's own options still win): LibAFL's
      # runtime first, so that the coverage of instrumented C extensions
      # reaches it, not the empty hooks of the sanitizer runtime.
      def libafl_environment(sanitizer = nil)
        environment = { ENV_NAME => "libafl" }
        return environment.merge(Sanitizers.preload_environment(libafl_path!)) unless sanitizer

        variable, defaults = SANITIZER_OPTIONS.fetch(sanitizer)
        environment.merge(Sanitizers.preload_environment("#{libafl_path!}:#{shared_runtime!(sanitizer)}"),
                          variable => [defaults, ENV.fetch(variable, "")].reject(&:empty?).join(":"))
      end

      # The shared runtime of +sanitizer+; raises SanitizerUnavailableError
      # when there is none.
      def shared_runtime!(sanitizer)
        name = Sanitizers::SHARED_RUNTIMES.fetch(sanitizer)[:name]
        Sanitizers.shared_runtime(sanitizer) ||
          raise(SanitizerUnavailableError, "the shared runtime of --sanitizer=#{sanitizer} (libclang_rt.#{name}) " \
                                           "was not found when ruzzy was installed: #{Sanitizers.build_report}")
      end

      # Why the libafl engine does not take the flag +word+ named +name+.
      def refusal(name, word)
        if PARENT_MODES.include?(name)
          return "#{word} does not run under the libafl engine: LibAFL's runtime does it by forking the process " \
                 "from C, which a Ruby interpreter does not survive; use the libfuzzer engine " \
                 "(#{ENV_NAME}=libfuzzer, or no --engine), or ruzzy --findings=DIR for a campaign that goes on " \
                 "after findings"
        end

        "the libafl engine has no -#{name} (it takes -#{(LIBAFL_FLAGS + RUZZY_FLAGS).join(", -")}; " \
          "#{IGNORED_FLAGS.map { |flag| "-#{flag}" }.join(", ")} are ignored)"
      end

      def decided?(name)
        DECIDED_FLAGS.include?(name)
      end

      # libFuzzer's arguments (a LibFuzzerArgs) as LibAFL's runtime takes
      # them: its own flags kept, ruzzy's and the ignored ones left out, input
      # files and directories kept. Raises InvalidArgumentsError naming any
      # other flag. Returns [arguments, runs, seconds, rss_limit_mb] (0: no
      # limit).
      def for_libafl(args)
        kept = args.reject_flags do |name, word|
          $stderr.write("INFO: ruzzy: the libafl engine ignores #{word} (LibAFL decides it)\n") if decided?(name)
          next true if RUZZY_FLAGS.include?(name) || IGNORED_FLAGS.include?(name)
          next true if PARENT_MODES.include?(name) && word.end_with?("=0")
          next false if LIBAFL_FLAGS.include?(name)

          raise InvalidArgumentsError, refusal(name, word)
        end
        limits = %w[runs max_total_time].map { |name| [Integer(args.value(name) || "0", 10), 0].max }
        [kept.with("rss_limit_mb", 0), *limits, args.rss_limit_mb]
      rescue ArgumentError => e
        raise if e.is_a?(InvalidArgumentsError)

        raise InvalidArgumentsError, "-runs and -max_total_time take a whole number (#{e.message})"
      end
    end
  end
end

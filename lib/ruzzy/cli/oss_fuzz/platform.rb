# frozen_string_literal: true

require_relative "../../error"
require_relative "../../sanitizers"

module Ruzzy
  class OssFuzz
    # What OSS-Fuzz and ClusterFuzzLite expect of a fuzz target in $OUT, and
    # what ruzzy does about each of their sanitizer builds. One place for
    # these facts: the launcher, its .options file and the tests read them
    # from here.
    module Platform
      # The platforms' scripts (targets_list, test_all.py, ClusterFuzz) take
      # an executable file in $OUT for a libFuzzer target only when its bytes
      # contain this name.
      MARKER = "LLVMFuzzerTestOneInput"

      # The sanitizer options a Ruby process needs (Sanitizers::RUBY_OPTIONS),
      # by the variable that carries them; appended after the runner's own
      # (the last occurrence of an option wins), which set detect_leaks=1
      # and use_sigaltstack=1 and override a preload's defaults.
      RUNTIME_OPTIONS = {
        "address" => { "ASAN_OPTIONS" => Sanitizers::RUBY_OPTIONS.fetch("address") },
        "undefined" => { "UBSAN_OPTIONS" => Sanitizers::RUBY_OPTIONS.fetch("undefined") }
      }.freeze

      # The .options file sections that carry the same options, for
      # ClusterFuzz, which reads the file itself.
      OPTIONS_SECTIONS = { "ASAN_OPTIONS" => "asan", "UBSAN_OPTIONS" => "ubsan" }.freeze

      # $SANITIZER values (project.yaml's sanitizers, plus the platforms' own
      # builds) and the preload each gets: nil for none.
      SANITIZERS = {
        "address" => "address",
        "undefined" => "undefined",
        "coverage" => nil,
        "none" => nil,
        "introspector" => nil
      }.freeze

      # $SANITIZER values that cannot work for Ruby, and why.
      UNSUPPORTED = {
        "memory" => "MemorySanitizer needs every library in the process, the Ruby interpreter and " \
                    "libc++ included, built with it; list only address and undefined under " \
                    "sanitizers: in project.yaml",
        "thread" => "ThreadSanitizer does not work in a Ruby process; list only address and " \
                    "undefined under sanitizers: in project.yaml",
        "dataflow" => "dataflow builds need every library built with DataFlowSanitizer; ruzzy " \
                      "supports address, undefined, coverage, introspector and none"
      }.freeze

      module_function

      # The preload for sanitizer +name+ (a $SANITIZER value or one of
      # ruzzy's own spellings): "address", "undefined" or nil. Raises
      # InvalidArgumentsError saying what to do for one that cannot work.
      def preload_for(name)
        name = name.to_s
        return SANITIZERS.fetch(name) if SANITIZERS.key?(name)
        return Sanitizers::ALIASES.fetch(name) if Sanitizers::ALIASES.key?(name)
        raise InvalidArgumentsError, "sanitizer #{name.inspect}: #{UNSUPPORTED.fetch(name)}" if UNSUPPORTED.key?(name)

        raise InvalidArgumentsError,
              "unknown sanitizer #{name.inspect}; use one of #{(SANITIZERS.keys + Sanitizers::ALIASES.keys).join(", ")}"
      end

      # The environment variables to extend for +preload+ and what to append.
      def runtime_options(preload)
        RUNTIME_OPTIONS.fetch(preload.to_s, {})
      end

      # The .options file for +preload+: the same options, in the sections
      # ClusterFuzz and run_fuzzer read (parse_options.py).
      def options_file(preload)
        runtime_options(preload).map do |variable, options|
          lines = options.split(":").map { |option| option.sub("=", " = ") }
          "[#{OPTIONS_SECTIONS.fetch(variable)}]\n#{lines.join("\n")}\n"
        end.join("\n")
      end
    end
  end
end

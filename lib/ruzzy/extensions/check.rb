# frozen_string_literal: true

# Every file of lib/ruzzy/extensions/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: error, sanitizers, settings.

require_relative "shared_object"

module Ruzzy
  module Extensions
    # Whether a compiled extension was built for fuzzing under a sanitizer:
    # compiled by clang, calling the sanitizer's runtime and
    # SanitizerCoverage (libFuzzer's coverage of the C code). An extension
    # without the runtime's symbols is not checked at all by the sanitizer;
    # one without SanitizerCoverage is fuzzed blind (libFuzzer sees none of
    # its branches or comparisons); one compiled by GCC has neither.
    module Check
      # The symbols by which an instrumented object calls each sanitizer's
      # runtime (every ASan module's constructor calls __asan_init).
      SANITIZER_SYMBOLS = {
        "address" => /\A__asan_init\z/,
        "undefined" => /\A__ubsan_handle_/
      }.freeze
      COVERAGE_SYMBOLS = /\A__sanitizer_cov_/
      CLANG = /clang version/
      # What a LoadError says of an extension instrumented for a sanitizer
      # that was loaded without the sanitizer's runtime.
      INSTRUMENTED_SYMBOL = /undefined symbol: __(?:asan|ubsan|sanitizer|sancov)/
      FLAGS = { "address" => "-fsanitize=address", "undefined" => "-fsanitize=undefined" }.freeze

      module_function

      # What is missing from the shared object at +path+ for +sanitizer+
      # ("address" or "undefined"): an empty list when nothing is.
      def problems(path, sanitizer)
        object = SharedObject.new(path)
        missing = []
        unless object.comments.any?(CLANG)
          compilers = object.comments.map { |line| line[/\A[^:(]+/].to_s.strip }.uniq.reject(&:empty?)
          by = compilers.empty? ? "no compiler recorded" : "by #{compilers.join(", ")}"
          missing << "not compiled by clang (#{by})"
        end
        unless object.symbols.any?(SANITIZER_SYMBOLS.fetch(sanitizer))
          missing << "no #{sanitizer == "address" ? "AddressSanitizer" : "UndefinedBehaviorSanitizer"} " \
                     "instrumentation (#{FLAGS.fetch(sanitizer)})"
        end
        missing << "no SanitizerCoverage (-fsanitize=fuzzer-no-link)" unless object.symbols.any?(COVERAGE_SYMBOLS)
        missing
      rescue SharedObject::NotSharedObject => e
        [e.message]
      end

      # What to do about +error+ (raised by `require`) when it is an
      # instrumented extension loaded without its sanitizer's runtime.
      def load_error_hint(error)
        return nil unless error.is_a?(LoadError) && error.message.match?(INSTRUMENTED_SYMBOL)

        "that extension was built for fuzzing under a sanitizer: run with " \
          "--sanitizer=#{error.message.include?("__ubsan") ? "undefined" : "address"}"
      end

      # One line per shared object in +paths+ that lacks something.
      def report(paths, sanitizer)
        paths.filter_map do |path|
          missing = problems(path, sanitizer)
          "#{path}: #{missing.join("; ")}" unless missing.empty?
        end
      end
    end
  end
end

# frozen_string_literal: true

require "open3"
require "rbconfig"
require_relative "../sanitizers"
require_relative "../settings"

module Ruzzy
  module Extensions
    # The compiler and flags a C or C++ extension is built with for fuzzing,
    # as the environment mkmf and make read (CC, CXX, LDSHARED, LDSHAREDXX,
    # CFLAGS, CXXFLAGS and MAKE with --environment-overrides, so they win
    # over the compiler and flags the Makefile names).
    #
    # Two sources, never mixed:
    # - the builder's: when CFLAGS already asks for a sanitizer, or
    #   SANITIZER and CFLAGS are both set (OSS-Fuzz's and ClusterFuzzLite's
    #   compile step sets CC, CFLAGS and SANITIZER), its compiler and flags,
    #   with -fPIC added and, for a fuzzing sanitizer (address, undefined),
    #   libFuzzer's coverage; a coverage or introspector build has no
    #   sanitizer (nil) and nothing is added for one;
    # - ruzzy's: the clang the preloads were built with (so the extension
    #   and the preloaded runtime agree), Ruby's own compile flags at the
    #   chosen optimisation level without its hardening (stack protector,
    #   control-flow protection), and the sanitizer, libFuzzer coverage,
    #   frame pointers and no _FORTIFY_SOURCE (whose checked copies of
    #   memcpy and friends would abort before AddressSanitizer reports).
    class Toolchain
      # The optimisation level that fuzzes fastest while the planted bugs of
      # test/fixtures/planted_bugs are all still reported (docs/c-extensions.md).
      DEFAULT_LEVEL = "2"
      LEVELS = %w[0 1 2 3 s g].freeze
      COVERAGE = "-fsanitize=fuzzer-no-link"
      ADDED = %w[-fno-omit-frame-pointer -fno-common -fPIC -U_FORTIFY_SOURCE].freeze
      # Ruby's hardening flags, whose checks AddressSanitizer makes
      # redundant and which only cost time under it.
      HARDENING = /\A-(?:fstack-protector|fstack-clash-protection|fcf-protection|D_FORTIFY_SOURCE)/

      # +sanitizer+: "address" or "undefined" (nil: the builder's, else
      # address); +level+: an -O level (nil: DEFAULT_LEVEL).
      def initialize(sanitizer: nil, level: nil, env: ENV)
        @env = env
        flags = env.fetch("CFLAGS", "")
        @builder = flags.include?("-fsanitize=") || (!env.fetch("SANITIZER", "").empty? && !flags.empty?)
        @sanitizer = sanitizer || (@builder ? builder_sanitizer : "address")
        @level = level || DEFAULT_LEVEL
      end

      # The sanitizer the extension is built (and checked) for: "address",
      # "undefined", or nil for a builder's build without one (coverage).
      attr_reader :sanitizer

      # Whether the builder's compiler and flags are used.
      def builder?
        @builder
      end

      def cc
        @cc ||= @builder ? @env.fetch("CC", "clang") : clang
      end

      def cxx
        @cxx ||= if @builder then @env.fetch("CXX", "clang++")
                 elsif File.basename(cc).include?("clang") then cc.sub(%r{clang(?=[^/]*\z)}, "clang++")
                 else
                   "clang++"
                 end
      end

      # The variables to build with.
      def environment
        {
          "CC" => cc, "CXX" => cxx, "LDSHARED" => "#{cc} -shared", "LDSHAREDXX" => "#{cxx} -shared",
          "CFLAGS" => cflags, "CXXFLAGS" => cxxflags, "MAKE" => make
        }
      end

      def cflags
        @builder ? completed(@env.fetch("CFLAGS")) : ruzzy_flags(RbConfig::CONFIG["CFLAGS"])
      end

      def cxxflags
        @builder ? completed(@env.fetch("CXXFLAGS", @env.fetch("CFLAGS"))) : ruzzy_flags(RbConfig::CONFIG["CXXFLAGS"])
      end

      # make as RubyGems and ruzzy run it: the environment's variables win,
      # and the compile lines are shown (in gem_make.out for a gem).
      def make
        words = @env.fetch("MAKE", "make").split
        words << "--environment-overrides" unless words.include?("--environment-overrides")
        words << "V=1" unless words.any? { |word| word.start_with?("V=") }
        words.join(" ")
      end

      # The compiler's first --version line ("" when it cannot be run).
      def version
        output, = Open3.capture2e(cc, "--version")
        output.lines.first.to_s.strip
      rescue SystemCallError
        ""
      end

      # One line saying what the extension is built with.
      def description
        source = "-O#{@level}, #{@sanitizer}"
        source = "the builder's compiler and flags (#{@sanitizer || "no fuzzing sanitizer"})" if @builder
        "#{cc} (#{version.empty? ? "not found" : version}); #{source}"
      end

      private

      # Ruby's own flags for extensions, at @level and without hardening,
      # plus the sanitizer's.
      def ruzzy_flags(ruby_flags)
        own = ruby_flags.to_s.split.reject { |flag| flag.match?(/\A-O/) || flag.match?(HARDENING) }
        [*own, "-O#{@level}", *ADDED, "-fsanitize=#{@sanitizer}", COVERAGE].uniq.join(" ")
      end

      # The builder's flags with what fuzzing a Ruby extension needs added.
      def completed(flags)
        words = flags.split
        fuzzer = words.any? { |word| word.match?(/\A-fsanitize=.*\bfuzzer(?:-no-link)?\b/) }
        words << COVERAGE if @sanitizer && !fuzzer
        words << "-fPIC" unless words.include?("-fPIC")
        words.join(" ")
      end

      # The builder's fuzzing sanitizer: SANITIZER's, else what CFLAGS asks
      # for; nil for any other build (coverage, introspector, memory).
      def builder_sanitizer
        named = @env.fetch("SANITIZER", "")
        return named if Sanitizers::FILES.key?(named)
        return nil unless named.empty?

        asked = @env.fetch("CFLAGS").scan(/-fsanitize=(\S+)/).flatten.join(",").split(",") - %w[fuzzer fuzzer-no-link]
        return "address" if asked.include?("address")

        asked.empty? || asked.intersect?(%w[memory thread]) ? nil : "undefined"
      end

      # The clang whose runtime the preloads carry, else RUZZY_CLANG or clang.
      def clang
        recorded = Sanitizers.clang
        return recorded if recorded && File.executable?(recorded)

        explicit = @env.fetch(Settings::CLANG, "")
        explicit.empty? ? "clang" : explicit
      end
    end
  end
end

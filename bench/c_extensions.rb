# frozen_string_literal: true

require "fileutils"
require "json"
require "open3"
require "rbconfig"

module Bench
  # Real C-extension gems from Debian's archive (the upstream tarball of
  # the packaged version, as `apt-get source` unpacks it), each doing the
  # same work on every execution: a fixed document, whatever the input.
  # Used by the c_extensions section of bench/run.rb.
  module CExtensions
    ROOT = File.expand_path("..", __dir__)
    HARNESS = File.join(__dir__, "c_extensions", "fixed_input.rb")
    SOURCES = ENV.fetch("BENCH_SOURCES", "/var/cache/ruzzy/bench-sources")

    # name => [Debian pool path, the file to require (the harness knows
    # what one execution does with it)]
    GEMS = {
      "oj 3.14.2" => ["pool/main/r/ruby-oj/ruby-oj_3.14.2.orig.tar.gz", "oj"],
      "cbor 0.5.9.8" => ["pool/main/r/ruby-cbor/ruby-cbor_0.5.9.8.orig.tar.gz", "cbor"],
      "commonmarker 0.23.10" => ["pool/main/r/ruby-commonmarker/ruby-commonmarker_0.23.10.orig.tar.gz", "commonmarker"],
      "prism 1.9.0" => ["pool/main/r/ruby-prism/ruby-prism_1.9.0.orig.tar.gz", "prism"],
      "bson 5.2.0" => ["pool/main/r/ruby-bson/ruby-bson_5.2.0.orig.tar.gz", "bson"],
      "github-linguist 7.22.1" => ["pool/main/r/ruby-github-linguist/ruby-github-linguist_7.22.1.orig.tar.gz",
                                   "linguist/linguist"]
    }.freeze

    # The gems to measure: those whose name starts with one of the
    # comma-separated BENCH_GEMS (default: all).
    def self.selected
      wanted = ENV.fetch("BENCH_GEMS", "").split(",").map(&:strip).reject(&:empty?)
      wanted.empty? ? GEMS.keys : GEMS.keys.select { |name| wanted.any? { |prefix| name.start_with?(prefix) } }
    end

    # Ruzzy 0.8's README's ASAN_OPTIONS (its libFuzzer would report Ruby's
    # memory as leaked after the first input otherwise).
    RUZZY_0_8_ASAN_OPTIONS = "allocator_may_return_null=1:detect_leaks=0:use_sigaltstack=0"

    # The flags docs/c-extensions.md gave before `ruzzy build-ext`, and
    # Ruzzy 0.8's README gives: no -O, so mkmf compiles unoptimised.
    RECIPE = {
      "CC" => "clang", "CXX" => "clang++",
      "CFLAGS" => "-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer -fno-common -fPIC -g",
      "CXXFLAGS" => "-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer -fno-common -fPIC -g"
    }.freeze

    module_function

    # The unpacked source of +name+ in a fresh directory under +work+.
    def unpack(name, work)
      pool, = GEMS.fetch(name)
      tarball = File.join(SOURCES, File.basename(pool))
      download(pool, tarball) unless File.file?(tarball)
      dir = File.join(work, name.tr(" ", "-"))
      FileUtils.mkdir_p(dir)
      system("tar", "-xzf", tarball, "-C", dir, "--strip-components=1", exception: true)
      dir
    end

    def download(pool, tarball)
      mirror, = Open3.capture2(File.join(ROOT, "bin", "rubies"), "mirror")
      FileUtils.mkdir_p(SOURCES)
      system("curl", "-fsSL", "-o", "#{tarball}.part", "#{mirror.strip}/#{pool}", exception: true)
      File.rename("#{tarball}.part", tarball)
    end

    # Builds +dir+ in place with `ruzzy build-ext`: with +env+ set to the
    # recipe's flags it uses them as they are (they ask for a sanitizer).
    def build(dir, *flags, env: {})
      output, status = Open3.capture2e(env, "ruzzy", "build-ext", *flags, dir)
      raise "ruzzy build-ext #{flags.join(" ")} #{dir} failed:\n#{output}" unless status.success?
    end

    # The environment the harness reads: where the gem's lib is and what
    # to require.
    def harness_env(name, dir)
      _, feature = GEMS.fetch(name)
      { "BENCH_LIB" => File.join(dir, "lib"), "BENCH_REQUIRE" => feature }
    end
  end
end

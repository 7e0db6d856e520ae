# frozen_string_literal: true

# What the OSS-Fuzz tests (integration and search) share: a project built
# with `ruzzy oss-fuzz-build`, and the contract of OSS-Fuzz's and
# ClusterFuzzLite's runner scripts (google/oss-fuzz, infra/base-images/
# base-runner), restated here from what those scripts do:
# - a target is an executable file at the top of $OUT that `file` calls an
#   ELF or a shell script and whose bytes contain LLVMFuzzerTestOneInput;
# - the build check runs it as `TARGET -- -seed=1337 -runs=4` and wants
#   "Done 4 runs", after moving $OUT to another directory;
# - run_fuzzer runs `TARGET -- -rss_limit_mb=2560 -timeout=25 FLAGS CORPUS`
#   from $OUT with the runner image's ASAN_OPTIONS (detect_leaks=1,
#   use_sigaltstack=1, handle_abort=1, ...), and reproduce passes a testcase;
# - ClusterFuzzLite adds -len_control=0 -seed=1337 -rss_limit_mb=0
#   -artifact_prefix=DIR/ and -jobs/-workers.
module OssFuzzRunner
  # The base-runner image's sanitizer environment.
  RUNNER_ENV = {
    "ASAN_OPTIONS" => "alloc_dealloc_mismatch=0:allocator_may_return_null=1:allocator_release_to_os_interval_ms=500:" \
                      "check_malloc_usable_size=0:detect_container_overflow=1:detect_odr_violation=0:detect_leaks=1:" \
                      "detect_stack_use_after_return=1:fast_unwind_on_fatal=0:handle_abort=1:handle_segv=1:" \
                      "handle_sigill=1:max_uar_stack_size_log=16:print_scariness=1:quarantine_size_mb=10:" \
                      "strict_memcmp=1:strip_path_prefix=/workspace/:symbolize=1:use_sigaltstack=1:" \
                      "dedup_token_length=3",
    "UBSAN_OPTIONS" => "print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:" \
                       "strip_path_prefix=/workspace/:symbolize=1:dedup_token_length=3",
    "FUZZER_ARGS" => "-rss_limit_mb=2560 -timeout=25"
  }.freeze
  RUN_FUZZER_FLAGS = %w[-rss_limit_mb=2560 -timeout=25].freeze
  CLUSTERFUZZLITE_FLAGS = %w[-len_control=0 -seed=1337 -rss_limit_mb=0].freeze
  MARKER = "LLVMFuzzerTestOneInput"

  PLANTED = <<~RUBY
    module Planted
      def self.parse(data)
        raise ArgumentError, "planted bug" if data.start_with?("FUZ!")

        data.bytesize
      end
    end
  RUBY

  # Two exceptions and a hang, in methods of their own.
  THREE_BUGS = <<~RUBY
    module ThreeBugs
      def self.header!(data)
        raise ArgumentError, "bad header" if data.start_with?("H")
      end

      def self.body(data)
        Integer(data) if data.start_with?("7")
      end

      def self.spin(data)
        loop { data.bytesize } if data.start_with?("L")
      end
    end
  RUBY

  # A project as build.sh sees it: lib/ and fuzz/ with a harness that finds
  # the planted bug and one with no branch of its own (JSON's parser is C).
  def write_project(dir)
    FileUtils.mkdir_p([File.join(dir, "lib"), File.join(dir, "fuzz")])
    File.write(File.join(dir, "lib", "planted.rb"), PLANTED)
    File.write(File.join(dir, "fuzz", "fuzz_planted.rb"),
               "require \"ruzzy\"\nrequire \"planted\"\nRuzzy.fuzz(->(data) { Planted.parse(data); nil })\n")
    File.write(File.join(dir, "fuzz", "fuzz_json.rb"), <<~RUBY)
      require "ruzzy"
      require "json"
      Ruzzy.fuzz(lambda do |data|
        JSON.parse(data)
        nil
      rescue JSON::ParserError
        nil
      end)
    RUBY
  end

  # Builds the example project as build.sh does (OUT and SANITIZER in the
  # environment), then moves $OUT as test_all.py does; returns the new $OUT.
  def build_and_move(dir, sanitizer: "address")
    project = File.join(dir, "project")
    write_project(project)
    out = File.join(dir, "out")
    FileUtils.mkdir_p(out)
    build = ruzzy("oss-fuzz-build", "fuzz/fuzz_planted.rb", "fuzz/fuzz_json.rb", "-I", "lib",
                  chdir: project, env: { "OUT" => out, "SANITIZER" => sanitizer })
    assert_exit 0, build
    moved = File.join(dir, "not-out")
    FileUtils.mv(out, moved)
    FileUtils.rm_rf(project)
    moved
  end

  # The moved $OUT and an empty corpus directory in +dir+.
  def out_and_corpus(dir)
    corpus = File.join(dir, "corpus")
    FileUtils.mkdir_p(corpus)
    [build_and_move(dir), corpus]
  end

  # What targets_list and test_all.py take for fuzz targets in +out+.
  def platform_targets(out)
    Dir.children(out).sort.select do |name|
      path = File.join(out, name)
      next false unless File.file?(path) && File.executable?(path)

      kind = run_command("file", path).stdout
      (kind.include?("ELF") || kind.include?("shell script")) && File.binread(path).include?(MARKER)
    end
  end

  def prerequisites!
    prerequisite!(sanitizers_built?, "the sanitizer preloads were not built (clang missing at install)")
    prerequisite!(system("command -v file unzip >/dev/null"), "file and unzip (apt-get install file unzip)")
  end

  # ClusterFuzz's stack parser (google/clusterfuzz, src/clusterfuzz/
  # stacktraces), restated: a crash line (libFuzzer's "deadly signal" or
  # "timeout", or a sanitizer's "ERROR: ...Sanitizer") starts the crash
  # over; the crash state is the function names of the first three
  # sanitizer-style frames ("#N 0xADDR in FUNCTION FILE:LINE[:COL]") after
  # it, each cut at the first space, "(" or "[" and after the last "!".
  # Ruby 3.4 names methods with their owner ("Planted.parse"); that part is
  # dropped here so the expectations hold on every Ruby.
  def crash_state(log)
    crash_line = /^.*(?:ERROR:\s*libFuzzer:\s*(?:deadly signal|timeout)|ERROR: \w+Sanitizer:).*$/
    after = log.split(crash_line).last.to_s
    after.scan(/^\s*#\d+\s+0x\h+\s+in\s+(.+) \S+:\d+(?::\d+)?$/).flatten.first(3).map do |name|
      name.split("!").last.to_s[/\A[^ (\[]*/].sub(/\A[A-Z]\w*[.#]/, "")
    end
  end
end

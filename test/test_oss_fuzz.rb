# frozen_string_literal: true

require_relative "test_helper"

# `ruzzy oss-fuzz-build` against the contract of OSS-Fuzz's and
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
class TestOssFuzz < Minitest::Test
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

  def test_targets_are_found_and_pass_the_build_check_after_out_moves
    prerequisites!
    in_tmpdir do |dir|
      out = build_and_move(dir)
      assert_equal %w[fuzz_json fuzz_planted], platform_targets(out)
      assert_match(/^detect_leaks = 0$/, File.read(File.join(out, "fuzz_json.options")))
      %w[fuzz_json fuzz_planted].each do |target|
        check = run_command(File.join(out, target), "--", "-seed=1337", "-runs=4", chdir: dir, env: RUNNER_ENV)
        assert_exit 0, check
        assert_match(/^Done 4 runs/, check.stderr)
        refute_match(/no interesting inputs|LeakSanitizer/, check.stderr)
      end
    end
  end

  def test_run_fuzzer_finds_the_planted_bug_and_a_harmless_testcase_reproduces_cleanly
    search_test!
    prerequisites!
    in_tmpdir do |dir|
      out, corpus = out_and_corpus(dir)
      target = File.join(out, "fuzz_planted")
      found = run_command(target, "--", *RUN_FUZZER_FLAGS, "-seed=1", "-max_total_time=120", corpus,
                          chdir: out, env: RUNNER_ENV)
      assert_exit 77, found
      assert_match(/ArgumentError: planted bug/, found.stderr)
      assert_equal 1, artifacts(out).size
      assert_empty artifacts(out, "leak-")

      harmless = File.join(dir, "testcase")
      File.write(harmless, "harmless")
      replay = run_command(target, "--", *RUN_FUZZER_FLAGS, "-runs=100", harmless, chdir: out, env: RUNNER_ENV)
      assert_exit 0, replay
      crash = run_command(target, "--", *RUN_FUZZER_FLAGS, "-runs=100", File.join(out, artifacts(out).first),
                          chdir: out, env: RUNNER_ENV)
      assert_exit 77, crash
      assert_equal %w[parse <top>], crash_state(crash.stderr), crash.stderr
    end
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

  # Different Ruby bugs get different crash states, made of their own Ruby
  # frames, with and without a sanitizer preload (the runner's environment
  # is covered by the planted bug's replay above); a timeout too.
  def test_ruby_findings_are_grouped_by_their_ruby_frames
    prerequisites!
    in_tmpdir do |dir|
      File.write(File.join(dir, "three_bugs.rb"), THREE_BUGS)
      harness = write_harness(dir, "require_relative 'three_bugs'\n" \
                                   "Ruzzy.fuzz(->(data) { ThreeBugs.header!(data); ThreeBugs.body(data); " \
                                   "ThreeBugs.spin(data); nil })\n")
      input = lambda do |bytes|
        File.join(dir, bytes).tap { |path| File.write(path, bytes) }
      end
      [[], ["--sanitizer=address"]].each do |flags|
        header = ruzzy(*flags, harness, input.call("Hx"))
        assert_exit 77, header
        assert_equal %w[header%21 <top>], crash_state(header.stderr), header.stderr
        body = ruzzy(*flags, harness, input.call("7x"))
        assert_exit 77, body
        assert_includes crash_state(body.stderr), "body", body.stderr
      end
      spin = ruzzy(harness, "-timeout=1", input.call("Lx"))
      assert_exit 70, spin
      # Where the alarm lands differs (Ruby 3.4 shows no frame for bytesize).
      assert_empty %w[spin loop] - crash_state(spin.stderr), spin.stderr
    end
  end

  def test_clusterfuzzlite_flags_with_jobs_find_the_planted_bug
    search_test!
    prerequisites!
    in_tmpdir do |dir|
      out, corpus = out_and_corpus(dir)
      artifacts_dir = File.join(dir, "artifacts")
      FileUtils.mkdir_p(artifacts_dir)
      run = run_command(File.join(out, "fuzz_planted"), "--", *RUN_FUZZER_FLAGS, *CLUSTERFUZZLITE_FLAGS,
                        "-artifact_prefix=#{artifacts_dir}/", "-max_total_time=120", "-jobs=2", "-workers=2",
                        corpus, chdir: dir, env: RUNNER_ENV)
      assert_equal 1, artifacts(artifacts_dir).size, run.output[-3000..]
      assert_empty artifacts(artifacts_dir, "leak-")
      logs = Dir.glob(File.join(dir, "fuzz-*.log")).map { |log| File.read(log) }.join
      assert_match(/ArgumentError: planted bug/, logs)
    end
  end

  def test_every_platform_sanitizer_is_mapped_or_refused
    prerequisites!
    in_tmpdir do |dir|
      %w[coverage none introspector].each do |sanitizer|
        out = build_and_move(File.join(dir, sanitizer), sanitizer:)
        launcher = File.read(File.join(out, "fuzz_json"))
        refute_match(/--sanitizer|ASAN_OPTIONS/, launcher, sanitizer)
        refute File.exist?(File.join(out, "fuzz_json.options")), sanitizer
        check = run_command(File.join(out, "fuzz_json"), "--", "-seed=1337", "-runs=4", env: RUNNER_ENV)
        assert_match(/^Done 4 runs/, check.stderr, sanitizer)
      end
      out = build_and_move(File.join(dir, "undefined"), sanitizer: "undefined")
      assert_match(/halt_on_error = 1/, File.read(File.join(out, "fuzz_json.options")))
      assert_match(/--sanitizer=undefined/, File.read(File.join(out, "fuzz_json")))

      refused = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), "--out=#{dir}/x",
                      env: { "SANITIZER" => "memory" })
      assert_exit 2, refused
      assert_match(/MemorySanitizer needs every library/, refused.stderr)
    end
  end

  def test_seed_corpus_and_dictionary
    prerequisites!
    in_tmpdir do |dir|
      seeds = File.join(dir, "seeds")
      FileUtils.mkdir_p(File.join(seeds, "nested"))
      File.write(File.join(seeds, "one"), "FU")
      File.binwrite(File.join(seeds, "nested", "two"), "\x00\xFFbinary")
      dict = File.join(dir, "words.dict")
      File.write(dict, "\"FUZ!\"\n")
      out = build_and_move(dir)
      build = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), "--name=hello", "--seed-corpus=#{seeds}",
                    "--dict=#{dict}", "--out=#{out}")
      assert_exit 0, build
      assert_match(/2 seed input\(s\) in hello_seed_corpus\.zip/, build.stdout)
      unzipped = File.join(dir, "unzipped")
      assert_exit 0, run_command("unzip", "-q", "-d", unzipped, File.join(out, "hello_seed_corpus.zip"))
      assert_equal "\x00\xFFbinary".b, File.binread(File.join(unzipped, "nested", "two"))
      assert_equal "FU", File.read(File.join(unzipped, "one"))
      assert_equal File.read(dict), File.read(File.join(out, "hello.dict"))
    end
  end

  def test_the_earlier_command_line_still_works_after_being_moved
    search_test!
    in_tmpdir do |dir|
      out = File.join(dir, "out")
      build = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), "--out=#{out}", "--copy-gems", chdir: dir)
      assert_exit 0, build
      assert_match(%r{wrote .*/out/hello$}, build.stdout)
      runner = File.join(dir, "runner")
      FileUtils.mv(out, runner)
      work = File.join(dir, "work")
      FileUtils.mkdir_p(work)
      result = run_command(File.join(runner, "hello"), "-seed=1", "-runs=#{runs(2_000_000)}", "-rss_limit_mb=2560",
                           chdir: work)
      assert_exit 77, result
      assert_match(/RuntimeError: Hello\.parse: the FUZ record is not implemented/, result.stderr)
      assert_equal 1, artifacts(work).size
    end
  end

  # Trail of Bits' ruzzy 0.8 installed beside this gem (as in OSS-Fuzz's
  # base-builder-ruby image, GEM_PATH=/install/ruzzy): RubyGems activates
  # the highest version, this one, for `require "ruzzy"` and the command.
  def test_an_installed_ruzzy_0_8_does_not_shadow_this_gem
    in_tmpdir do |dir|
      old = File.join(dir, "ruzzy-0.8")
      FileUtils.mkdir_p(File.join(old, "lib"))
      File.write(File.join(old, "lib", "ruzzy.rb"), "raise 'the old ruzzy was loaded'\n")
      File.write(File.join(old, "ruzzy.gemspec"), <<~RUBY)
        Gem::Specification.new do |spec|
          spec.name = "ruzzy"
          spec.version = "0.8.0"
          spec.summary = "stand-in for Trail of Bits' ruzzy 0.8.0"
          spec.authors = ["test"]
          spec.files = ["lib/ruzzy.rb"]
        end
      RUBY
      assert_exit 0, run_command("gem", "build", "ruzzy.gemspec", chdir: old)
      install = File.join(dir, "install")
      assert_exit 0, run_command("gem", "install", "--local", "--no-document", "--install-dir", install,
                                 File.join(old, "ruzzy-0.8.0.gem"))
      ours = ruby("-e", "print Gem.path.join(':')").stdout
      env = { "GEM_PATH" => "#{install}:#{ours}" }
      loaded = ruby("-rruzzy", "-e", "print Ruzzy::VERSION", env:)
      assert_exit 0, loaded
      assert_operator Gem::Version.new(loaded.stdout), :>, Gem::Version.new("0.8.0")
      assert_match(/\Aruzzy \d+\.\d+/, ruzzy("--version", env:).stdout)
    end
  end

  # A clang whose runtimes are in a directory per target triple, as
  # OSS-Fuzz's are, made from this machine's clang (bin/per-target-clang).
  def per_target_clang(dir)
    assert_exit 0, run_command(File.join(ROOT, "bin", "per-target-clang"), dir)
    File.join(dir, "clang")
  end

  def test_sanitizer_preloads_build_with_per_target_runtime_directories
    prerequisite!(system("command -v clang nm >/dev/null"), "clang and nm")
    in_tmpdir do |dir|
      output = File.join(dir, "built")
      build = ruby(File.join(ROOT, "ext", "ruzzy", "build_sanitizers.rb"), output,
                   env: { "RUZZY_CLANG" => per_target_clang(dir) })
      assert_match(/^built: asan_with_fuzzer\.so$/, build.stdout)
      assert_match(/^built: ubsan_with_fuzzer\.so$/, build.stdout)
      symbols = run_command("nm", "-D", "--defined-only", File.join(output, "asan_with_fuzzer.so")).stdout
      assert_match(/ T LLVMFuzzerRunDriver$/, symbols)
      assert_match(/ T __asan_init$/, symbols)
    end
  end

  # build.sh runs with the image's clang as $CC: the preload in $OUT is
  # rebuilt with it, so the runtime is the one that instrumented the
  # project's C extensions; a $CC that cannot build it keeps the gem's own.
  def test_preload_in_out_is_rebuilt_with_the_builds_clang
    prerequisites!
    prerequisite!(system("command -v clang >/dev/null"), "clang")
    in_tmpdir do |dir|
      write_project(dir)
      out = File.join(dir, "out")
      cc = File.join(dir, "clang-logged")
      File.write(cc, "#!/bin/sh\necho \"$*\" >>#{dir}/cc.log\nexec #{per_target_clang(dir)} \"$@\"\n")
      File.chmod(0o755, cc)
      build = ruzzy("oss-fuzz-build", "fuzz/fuzz_planted.rb", "-I", "lib",
                    chdir: dir, env: { "OUT" => out, "SANITIZER" => "address", "CC" => cc })
      assert_exit 0, build
      assert_match(/sanitizer preloads built with #{Regexp.escape(cc)} \(.*clang version/, build.stdout)
      copied = Dir.glob(File.join(out, "ruzzy-gems", "gems", "ruzzy-*", "lib", "ruzzy", "**", "asan_with_fuzzer.so"))
      assert_equal 1, copied.size
      assert_match(/-shared .*-o \S+asan_with_fuzzer\.so .*libclang_rt\.asan\.a/, File.read(File.join(dir, "cc.log")))
      check = run_command(File.join(out, "fuzz_planted"), "--", "-seed=1337", "-runs=4", env: RUNNER_ENV)
      assert_match(/^Done 4 runs/, check.stderr)

      kept = ruzzy("oss-fuzz-build", "fuzz/fuzz_planted.rb", "-I", "lib",
                   chdir: dir, env: { "OUT" => out, "SANITIZER" => "address", "CC" => "/nonexistent/clang" })
      assert_exit 0, kept
      assert_match(%r{kept the gem's own sanitizer preloads \(/nonexistent/clang could not build them: missing: clang},
                   kept.stdout)
      assert File.binread(Ruzzy::Sanitizers.path("address")) == File.binread(copied.first),
             "the copy in $OUT is not the gem's own preload"
    end
  end

  def test_bad_invocations
    assert_exit 2, ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), env: { "OUT" => "" })
    result = ruzzy("oss-fuzz-build", "nope.rb", "--out=/tmp/x")
    assert_exit 2, result
    assert_match(/no such harness file: nope\.rb/, result.stderr)
    result = ruzzy("oss-fuzz-build", File.join(EXAMPLES, "hello.rb"), File.join(EXAMPLES, "maze.rb"), "--name=x",
                   "--out=/tmp/x")
    assert_exit 2, result
    assert_match(/--name takes one harness/, result.stderr)
  end
end

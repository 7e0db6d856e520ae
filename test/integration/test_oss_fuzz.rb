# frozen_string_literal: true

# oss-fuzz-build copies the installed gem it runs from into $OUT: these
# tests run an installed gem (test/support/installed_ruzzy.rb).
require_relative "../support/installed_ruzzy"
require_relative "../test_helper"
require_relative "../support/oss_fuzz_runner"

# `ruzzy oss-fuzz-build` against the contract of OSS-Fuzz's and
# ClusterFuzzLite's runner scripts (test/support/oss_fuzz_runner.rb).
class TestOssFuzz < Minitest::Test
  include OssFuzzRunner

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
      # This Ruby's preload in the copy of the gem the launcher runs (every
      # installed gem is copied; a precompiled gem has one per Ruby).
      running = File.read(File.join(out, "fuzz_planted"))[%r{ruzzy-gems/gems/ruzzy-[^/]+}]
      copied = Dir.glob(File.join(out, running, "lib", "ruzzy", "{#{RUBY_VERSION[/\A\d+\.\d+/]}/,}asan_with_fuzzer.so"))
      assert_equal 1, copied.size, copied.inspect
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

  # $OUT inside the harness's directory (the source tree the launcher
  # carries) is left out of its copy, not copied into itself.
  def test_out_inside_the_harness_directory
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { nil })")
      File.symlink("nowhere", File.join(dir, "dangling"))
      build = ruzzy("oss-fuzz-build", "harness.rb", "--out=#{dir}/out", chdir: dir)
      assert_exit 0, build
      assert File.file?(File.join(dir, "out", "harness.src", "harness.rb"))
      refute File.exist?(File.join(dir, "out", "harness.src", "out")), "$OUT copied into itself"
      assert_equal "nowhere", File.readlink(File.join(dir, "out", "harness.src", "dangling")), "a link stays a link"
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

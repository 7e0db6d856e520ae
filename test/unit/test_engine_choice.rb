# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"

# Ruzzy::Engine::Choice: engine names, where LibAFL's runtime is and what is said
# when it is missing, and libFuzzer's arguments translated for it.
class TestEngineChoice < Minitest::Test
  Choice = Ruzzy::Engine::Choice

  def args(*words)
    Ruzzy::LibFuzzerArgs.new(["harness.rb", *words])
  end

  def test_names
    assert_equal "libafl", Choice.canonical("LibAFL")
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Choice.canonical("afl++") }
    assert_match(/unknown engine "afl\+\+"; use one of libfuzzer, libafl/, error.message)
  end

  def test_environment_picks_the_engine
    previous = ENV.fetch(Choice::ENV_NAME, nil)
    ENV[Choice::ENV_NAME] = ""
    assert_equal "libfuzzer", Choice.from_environment
    ENV[Choice::ENV_NAME] = "libafl"
    assert_equal "libafl", Choice.from_environment
  ensure
    ENV[Choice::ENV_NAME] = previous
  end

  def test_translation_keeps_its_flags_and_files_and_takes_the_run_limits
    translated, runs, seconds, rss_limit_mb = Choice.for_libafl(
      args("-print_final_stats=1", "-timeout=25", "-runs=100", "-max_total_time=7", "-dict=words.txt",
           "-exact_artifact_path=out", "-rss_limit_mb=300", "corpus")
    )
    # LibAFL's runtime is told no memory limit: ruzzy keeps it.
    assert_equal ["harness.rb", "-timeout=25", "-dict=words.txt", "corpus", "-rss_limit_mb=0"], translated.to_a
    assert_equal [100, 7, 300], [runs, seconds, rss_limit_mb]
    assert_equal [0, 0, 2048], Choice.for_libafl(args).drop(1), "libFuzzer's defaults: no run limits, 2 GiB"
  end

  def test_translation_names_what_it_cannot_take
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Choice.for_libafl(args("-use_cmp=0")) }
    assert_match(/the libafl engine has no -use_cmp \(it takes -artifact_prefix, .*-runs, -max_total_time/,
                 error.message)
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Choice.for_libafl(args("-fork=2")) }
    assert_match(/-fork=2 does not run under the libafl engine: .*forking the process from C.*use the libfuzzer engine/,
                 error.message)
    assert_equal ["harness.rb", "-rss_limit_mb=0"], Choice.for_libafl(args("-jobs=0")).first.to_a,
                 "-jobs=0 asks for nothing"
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Choice.for_libafl(args("-runs=lots")) }
    assert_match(/-runs and -max_total_time take a whole number/, error.message)
  end

  def test_translation_says_which_flags_libafl_decides_itself
    _, err = capture_io { Choice.for_libafl(args("-seed=3", "-max_len=64", "-print_funcs=0")) }
    assert_match(/the libafl engine ignores -seed=3 \(LibAFL decides it\)/, err)
    assert_match(/ignores -max_len=64/, err)
    refute_match(/print_funcs/, err)
  end

  # The minimising command (libfuzzer engine) and a campaign's workers
  # (without --findings) are the starting command less one option.
  def test_an_option_is_dropped_in_both_spellings
    words = ["ruzzy", "--engine", "libafl", "-I", "lib", "--engine=libafl", "--findings=out", "h.rb"]
    assert_equal ["ruzzy", "-I", "lib", "--findings=out", "h.rb"], Ruzzy::Relaunch.without_option(words, "--engine")
    assert_equal ["--engine", "x"], Ruzzy::Relaunch.without_option(["--findings", "dir", "--engine", "x"], "--findings")
    assert_equal ["h.rb", "--engine"], Ruzzy::Relaunch.without_option(["h.rb", "--engine"], "--findings")
  end

  # --engine=libafl --sanitizer=address preloads clang's shared ASan
  # runtime, found the way the preloads' build finds the static ones.
  def test_clang_runtimes_are_found_or_nil
    require "ruzzy/sanitizers/clang_runtime"
    assert_nil Ruzzy::ClangRuntime.find("no-such-clang", "asan", ext: "so")
    prerequisite!(Ruzzy::Sanitizers.clang, "clang at install")
    assert_match(/libclang_rt\.asan(?:-(?:x86_64|aarch64))?\.so\z/,
                 Ruzzy::ClangRuntime.find(Ruzzy::Sanitizers.clang, "asan", ext: "so"))
    assert_match(/libclang_rt\.asan(?:-(?:x86_64|aarch64))?\.a\z/,
                 Ruzzy::ClangRuntime.find(Ruzzy::Sanitizers.clang, "asan"))
  end

  # The precompiled gem carries one LibAFL runtime for every Ruby, in
  # lib/ruzzy/ beside the per-Ruby native files (bin/platform-gem): found
  # there, wherever in lib/ruzzy/ the engine choice's own file is.
  def test_the_precompiled_gems_runtime_is_found_in_lib_ruzzy
    lib = File.dirname(Gem.find_files("ruzzy.rb").first)
    Dir.mktmpdir do |dir|
      Dir.glob("**/*.rb", base: lib).each do |file|
        FileUtils.mkdir_p(File.dirname(File.join(dir, file)))
        FileUtils.cp(File.join(lib, file), File.join(dir, file))
      end
      # This Ruby's native files (only looked for, never loaded here).
      FileUtils.mkdir_p(File.join(dir, "ruzzy", RUBY_VERSION[/\A\d+\.\d+/]))
      FileUtils.touch(File.join(dir, "ruzzy", RUBY_VERSION[/\A\d+\.\d+/], "ruzzy_ext.so"))
      runtime = File.join(dir, "ruzzy", Choice::LIBAFL_FILE)
      FileUtils.touch(runtime)
      found, err, status = Open3.capture3(RbConfig.ruby, "-I", dir, "-e",
                                          'require "ruzzy/engine/choice"; print Ruzzy::Engine::Choice.libafl_path!')
      assert status.success?, err
      assert_equal File.realpath(runtime), File.realpath(found)
    end
  end

  def test_a_missing_runtime_says_how_to_get_it
    Dir.mktmpdir do |dir|
      error = assert_raises(Ruzzy::EngineUnavailableError) { Choice.libafl_path!(dir) }
      assert_match(/the libafl engine \(libafl_libfuzzer\.so\) was not built when ruzzy was installed: /,
                   error.message)
      assert_match(/RUZZY_LIBAFL=1 .*rustup component add llvm-tools/, error.message)

      File.write(File.join(dir, Choice::LIBAFL_STATUS_FILE), "the build failed (cargo failed: no network); x\n")
      error = assert_raises(Ruzzy::EngineUnavailableError) { Choice.libafl_path!(dir) }
      assert_match(/the build failed \(cargo failed: no network\)/, error.message)
    end
  end

  # A file with the ELF header of a shared object for the other
  # architecture than this process's (x86_64 or aarch64).
  def foreign_object(path)
    object = Ruzzy::Extensions::SharedObject
    theirs = (object::MACHINES.keys - [object.machine(object::SELF)]).first
    File.binwrite(path, [object::MAGIC, 2, 1, 1, 0, 3, theirs].pack("a4C4x8S<S<").ljust(64, "\0"))
    object::MACHINES.fetch(theirs)
  end

  # A gem directory shared with a container of the other architecture: the
  # dynamic loader would skip the preload and run libFuzzer in its place.
  def test_a_runtime_for_another_machine_is_refused
    Dir.mktmpdir do |dir|
      theirs = foreign_object(File.join(dir, Choice::LIBAFL_FILE))
      error = assert_raises(Ruzzy::EngineUnavailableError) { Choice.libafl_path!(dir) }
      assert_match(/the libafl engine's runtime \S+#{Choice::LIBAFL_FILE} was built for #{theirs}, /, error.message)
      assert_match(/, not for this \w+ machine: /, error.message)
      assert_match(/RUZZY_LIBAFL=1/, error.message)
    end
  end

  # The install step given an already built runtime (RUZZY_LIBAFL_RUNTIME,
  # as bin/setup does): one for this machine is installed, one for another
  # is not, and libafl.txt says why.
  def test_the_install_takes_a_built_runtime_only_for_this_machine
    script = File.join(ROOT, "ext", "ruzzy", "build_libafl.rb")
    Dir.mktmpdir do |dir|
      foreign = File.join(dir, "foreign.so")
      theirs = foreign_object(foreign)
      _, err, status = Open3.capture3({ "RUZZY_LIBAFL_RUNTIME" => foreign }, RbConfig.ruby, script,
                                      File.join(dir, "other"))
      assert status.success?, err
      assert_match(/LibAFL's runtime was not built: \S+foreign\.so was built for #{theirs}, not for this/, err)
      refute_path_exists File.join(dir, "other", Choice::LIBAFL_FILE)
      said = File.read(File.join(dir, "other", Choice::LIBAFL_STATUS_FILE))
      assert_match(/was built for #{theirs}.*RUZZY_LIBAFL=1/, said)

      _, err, status = Open3.capture3({ "RUZZY_LIBAFL_RUNTIME" => "/proc/self/exe" }, RbConfig.ruby, script,
                                      File.join(dir, "ours"))
      assert status.success?, err
      assert_path_exists File.join(dir, "ours", Choice::LIBAFL_FILE)
      assert_equal "built\n", File.read(File.join(dir, "ours", Choice::LIBAFL_STATUS_FILE))
    end
  end

  # Only the x86_64 precompiled gem carries LibAFL's runtime: on aarch64
  # the engine is refused with what to do instead, not sent to a gem that
  # does not have it.
  def test_a_missing_runtime_names_what_the_precompiled_gem_carries
    assert_match(/or install the precompiled gem, which carries it\z/, Choice.libafl_report_default("x86_64-linux"))
    aarch64 = Choice.libafl_report_default("aarch64-linux")
    assert_match(/\Athe aarch64-linux precompiled gem does not carry it: use the default engine \(libfuzzer\)/, aarch64)
    assert_match(/install the source gem with RUZZY_LIBAFL=1 \(gem install ruzzy --platform ruby; Rust/, aarch64)
    refute_match(/precompiled gem/, Choice.libafl_report_default(nil))
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy"

# The Ruby API, in process: everything that must raise before libFuzzer
# starts (libFuzzer can start only once per process and never returns).
class TestApi < Minitest::Test
  def test_version
    assert_match(/\A\d+\.\d+\.\d+\z/, Ruzzy::VERSION)
  end

  def test_default_args_are_program_name_then_argv
    result = ruby("-rruzzy", "-e", "p Ruzzy::DEFAULT_ARGS", "--", "-runs=5", "corpus")
    assert_exit 0, result
    assert_equal %(["-e", "-runs=5", "corpus"]\n), result.stdout
    result = ruby("-rruzzy", "-e", "p Ruzzy::DEFAULT_ARGS", "--", "-runs=5", env: { "RUZZY_ARGV0" => "/opt/wrap" })
    assert_equal %(["/opt/wrap", "-runs=5"]\n), result.stdout, "RUZZY_ARGV0 names the program, as in Ruzzy 0.8"
  end

  # Ruzzy 0.8's names, as its harnesses and launchers use them: the
  # preload paths name files that exist (Makefiles and OSS-Fuzz launchers
  # LD_PRELOAD them), and c_libfuzzer_is_loaded says true with and without
  # a preloaded libFuzzer.
  def test_ruzzy08_names
    assert_same true, Ruzzy.c_libfuzzer_is_loaded
    assert_instance_of Pathname, Ruzzy::EXT_PATH
    prerequisite!(sanitizers_built?, "the sanitizer preloads were not built (clang missing at install)")
    [Ruzzy::ASAN_PATH, Ruzzy::UBSAN_PATH].each do |path|
      assert File.file?(path), path
      assert_equal Ruzzy::EXT_PATH.to_s, File.dirname(path)
    end
    preloaded = ruby("-rruzzy", "-e", "p Ruzzy.c_libfuzzer_is_loaded, Ruzzy::Native._engine",
                     env: { "LD_PRELOAD" => Ruzzy::ASAN_PATH, "ASAN_OPTIONS" => "detect_leaks=0" })
    assert_exit 0, preloaded
    assert_match(/\Atrue\n.*preloaded libFuzzer/, preloaded.stdout)
    assert_equal $PROGRAM_NAME, Ruzzy::ARGV0
    assert_nil Ruzzy.c_trace_cmp8(1, 2)
    assert_nil Ruzzy.c_trace_cmp8(2**70, "x"), "only Fixnums are reported, other operands are ignored"
    assert_nil Ruzzy.c_trace_div8(3)
    %i[c_fuzz c_trace fuzz trace dummy dummy_test_one_input].each do |name|
      assert_respond_to Ruzzy, name
    end
    assert_instance_of RuntimeError, assert_raises(Ruzzy::InvalidTargetError) { Ruzzy.c_fuzz(5, ["prog"]) }
  end

  # Errors are instances of the classes Ruzzy 0.8 raised (test-unit's
  # assert_raise checks instance_of?), tagged with Ruzzy's modules.
  def test_non_callable_target_is_rejected
    error = assert_raises(Ruzzy::InvalidTargetError) { Ruzzy.fuzz(42, ["prog"]) }
    assert_instance_of RuntimeError, error
    assert_kind_of Ruzzy::Error, error
    assert_match(/must respond to #call, got 42/, error.message)
    assert_instance_of RuntimeError, assert_raises(Ruzzy::InvalidTargetError) { Ruzzy.fuzz("not a proc") }
  end

  def test_empty_args_are_rejected
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy.fuzz(->(_) {}, []) }
    assert_instance_of RuntimeError, error
    assert_match(/program name/, error.message)
  end

  def test_args_must_be_an_array_of_strings_without_nul
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy.fuzz(->(_) {}, "prog -runs=1") }
    assert_instance_of RuntimeError, error
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy.fuzz(->(_) {}, ["prog", :runs]) }
    assert_instance_of TypeError, error
    assert_match(/args\[1\] must be a String, got :runs/, error.message)
    error = assert_raises(Ruzzy::InvalidArgumentsError) { Ruzzy.fuzz(->(_) {}, ["prog", "a\0b"]) }
    assert_match(/NUL/, error.message)
  end

  # The native entry point never hands libFuzzer an argument it would
  # truncate, however it is called (Ruzzy.fuzz has checked them already).
  def test_native_entry_point_rejects_what_libfuzzer_cannot_take
    fuzz = ->(words) { Ruzzy::Native._fuzz(->(_) {}, Ruzzy::LibFuzzerArgs.new(words), false, nil, nil, nil) }
    assert_raises(Ruzzy::InvalidArgumentsError) { fuzz.call([]) }
    assert_raises(Ruzzy::InvalidArgumentsError) { fuzz.call(["a\0b"]) }
    assert_raises(TypeError) { fuzz.call(["prog", 1]) }
    assert_raises(NoMethodError) { Ruzzy::Native._fuzz(->(_) {}, ["prog"], false, nil, nil, nil) }
  end

  def test_default_flags_unless_the_user_chose
    with_defaults = ->(args) { Ruzzy::LibFuzzerArgs.validate(args).with_defaults(Ruzzy::DEFAULT_FLAGS).to_a }
    assert_equal ["prog", "-print_final_stats=1", "-timeout=25", "-print_funcs=0", "-runs=1"],
                 with_defaults.call(["prog", "-runs=1"])
    assert_equal ["prog", "-timeout=25", "-print_funcs=0", "-print_final_stats=0"],
                 with_defaults.call(["prog", "-print_final_stats=0"])
    assert_equal ["prog", "-print_final_stats=1", "-print_funcs=0", "-timeout=3"],
                 with_defaults.call(["prog", "-timeout=3"]), "-timeout=N wins over the default"
  end

  def test_libfuzzers_leak_checks_are_off_unless_asked_for
    saved = ENV.values_at("ASAN_OPTIONS", "LSAN_OPTIONS")
    ENV["ASAN_OPTIONS"] = "detect_leaks=1:detect_leaks=0"
    ENV.delete("LSAN_OPTIONS")
    assert_equal ["-detect_leaks=0"], Ruzzy::Sanitizers.leak_flags, "the last setting wins, as in ASan"
    ENV["LSAN_OPTIONS"] = "detect_leaks=1"
    assert_empty Ruzzy::Sanitizers.leak_flags
  ensure
    ENV["ASAN_OPTIONS"], ENV["LSAN_OPTIONS"] = saved
  end

  def test_libfuzzer_flags_are_read_as_libfuzzer_reads_them
    args = Ruzzy::LibFuzzerArgs.validate(["-timeout=9", "-timeout=4", "-dict=a", "corpus", "-jobs=0", "-fork=2"])
    assert_equal "4", args.value("timeout"), "the last value wins; argv[0] is the program, not a flag"
    assert_equal 4, args.timeout
    assert args.runs_children?
    refute Ruzzy::LibFuzzerArgs.validate(["prog", "-jobs=0"]).runs_children?
    assert Ruzzy::LibFuzzerArgs.validate(["prog", "-use_value_profile=1"]).value_profile?
    refute Ruzzy::LibFuzzerArgs.validate(["prog", "-use_value_profile=1", "-use_value_profile=0"]).value_profile?
    refute args.value_profile?
    assert_equal 1200, Ruzzy::LibFuzzerArgs.validate(["prog"]).timeout, "libFuzzer's own default"
    assert_equal 1200, Ruzzy::LibFuzzerArgs.validate(["prog", "-timeout=-3"]).timeout
    assert_equal ["-timeout=9", "-timeout=4", "corpus", "-jobs=0", "-fork=2", "-dict=b"], args.with("dict", "b").to_a
    prefixed = Ruzzy::LibFuzzerArgs.validate(["p", "-artifact_prefix=out/"])
    assert_equal "out/crash-ab", prefixed.artifact_path("crash-", "ab")
    assert_equal "x", Ruzzy::LibFuzzerArgs.validate(["p", "-exact_artifact_path=x"]).artifact_path("crash-", "ab")
  end

  def test_engine_line_names_the_bundled_libfuzzer
    assert_match(%r{\AINFO: ruzzy: using the libFuzzer bundled in .*/ruzzy_ext\.so\z}, Ruzzy.engine)
  end

  def test_exception_report_shows_class_message_causes_and_target_frames
    error = begin
      begin
        raise KeyError, "inner"
      rescue KeyError
        raise ArgumentError, "outer"
      end
    rescue ArgumentError => e
      e
    end
    error.set_backtrace(["a.rb:1:in `parse'", "h.rb:2:in `block'", "ruzzy.rb:3:in `_fuzz'", "ruzzy.rb:3:in `fuzz'"])
    text = Ruzzy::Findings::Report.describe_exception(error)
    assert_match(/ERROR: ruzzy: uncaught Ruby exception in the fuzz target/, text)
    assert_match(/^ArgumentError: outer$/, text)
    assert_match(/^Caused by: KeyError: inner$/, text)
    assert_match(/^    from a\.rb:1:in `parse'$/, text)
    refute_match(/_fuzz|in `fuzz'/, text)
  end

  def test_finding_identity_is_the_same_for_every_ruby_backtrace_format
    before34 = ["/x/hello.rb:9:in `parse'", "/x/h.rb:2:in `block in <top (required)>'", "/r/ruzzy.rb:3:in `_fuzz'"]
    since34 = ["/x/hello.rb:9:in 'Hello.parse'", "/x/h.rb:2:in 'block in <top (required)>'",
               "/r/ruzzy.rb:3:in 'Ruzzy::Native._fuzz'"]
    tokens = [before34, since34].map do |backtrace|
      error = RuntimeError.new("x")
      error.set_backtrace(backtrace)
      Ruzzy::Findings::Report.dedup_token(error)
    end
    assert_equal ["RuntimeError--hello.rb:parse--h.rb:<top>"] * 2, tokens
  end

  # A hooked method's frame and the hook's are one frame, whichever way
  # the Ruby names them; ruzzy's C methods are not the target's.
  def test_a_hooked_methods_frames_are_shown_once
    before34 = ["/x/h.rb:2:in `to_i'", "/x/h.rb:2:in `to_i'", "/x/h.rb:2:in `convert'", "/r/ruzzy.rb:3:in `_fuzz'"]
    since34 = ["/x/h.rb:2:in 'String#to_i'", "/x/h.rb:2:in 'Ruzzy::CompareHooks::StringConversionHooks#to_i'",
               "/x/h.rb:2:in 'Object#convert'", "/r/ruzzy.rb:3:in 'Ruzzy::Native._fuzz'"]
    assert_equal ["/x/h.rb:2:in `to_i'", "/x/h.rb:2:in `convert'"], Ruzzy::Findings::RubyFrames.target_frames(before34)
    assert_equal ["/x/h.rb:2:in 'String#to_i'", "/x/h.rb:2:in 'Object#convert'"],
                 Ruzzy::Findings::RubyFrames.target_frames(since34)
  end

  def test_report_survives_a_broken_message_method
    error = RuntimeError.new("x")
    def error.message
      raise "broken"
    end
    assert_match(/#message raised RuntimeError/, Ruzzy::Findings::Report.describe_exception(error))
  end

  # A database's error about a query an input built holds the input's
  # bytes: a binary message beside a UTF-8 one is still reported.
  def test_report_shows_a_binary_message_beside_text
    error = begin
      begin
        raise ArgumentError, "near \u2019"
      rescue ArgumentError
        raise "unrecognized token: \"'\xFF\"".b
      end
    rescue RuntimeError => e
      e
    end
    text = Ruzzy::Findings::Report.describe_exception(error)
    assert_predicate text, :valid_encoding?
    assert_match(/^RuntimeError: unrecognized token: "'\\xFF"$/, text)
    assert_match(/^Caused by: ArgumentError: near \u2019$/, text)
    assert_equal "a\\xFE", Ruzzy::Error.text("a\xFE".b)
    assert_equal "\u00e9", Ruzzy::Error.text("\u00e9".encode("UTF-16LE"))
  end

  # Every exception class ruzzy defines for its own errors is a
  # Ruzzy::Error, so `rescue Ruzzy::Error` catches them all; the classes of
  # findings (what the target did: a detector's report, a hang, a failed
  # typed input, a server error response) are not.
  FINDING_CLASSES = %w[Ruzzy::Detectors::Report Ruzzy::Findings::InputTimeout
                       Ruzzy::FuzzTest::InputFailure Ruzzy::Web::ServerErrorResponse].freeze

  def test_every_error_class_of_ruzzy_is_a_ruzzy_error
    lib = File.dirname(Gem.find_files("ruzzy.rb").first)
    script = <<~RUBY
      Dir.glob("ruzzy/**/*.rb", base: ARGV[0]).sort.each do |file|
        require file unless file.end_with?("cov/replay.rb")
      rescue LoadError # a test framework's adapter, without the framework
        nil
      end
      classes = ObjectSpace.each_object(Class).select { |klass| klass < Exception && klass.name&.start_with?("Ruzzy::") }
      findings = #{FINDING_CLASSES.inspect}.map { |name| Object.const_get(name) }
      puts classes.reject { |klass| klass.include?(Ruzzy::Error) || findings.any? { |finding| klass <= finding } }
      warn classes.size
    RUBY
    checked = ruby("-I", lib, "-e", script, lib)
    assert checked.status.success?, checked.stderr
    assert_operator checked.stderr.to_i, :>=, 8, "the classes were found"
    assert_empty checked.stdout.lines, "exception classes that are not a Ruzzy::Error"
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# C extensions under AddressSanitizer and UndefinedBehaviorSanitizer: the
# preloads built at install, `ruzzy --sanitizer`, Ruzzy.dummy, and a
# realistic extension whose bug needs Ruby-side and C-side coverage.
class TestSanitizers < Minitest::Test
  FAULTS = File.join(FIXTURES, "c_ext", "faults.c")

  def setup
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
  end

  def test_dummy_finds_the_use_after_free
    in_tmpdir do |dir|
      result = ruzzy("dummy", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/INFO: ruzzy: using the preloaded libFuzzer in .*asan_with_fuzzer\.so/, result.stderr)
      assert_match(/ERROR: AddressSanitizer: heap-use-after-free/, result.stderr)
      assert_equal "HI", File.binread(File.join(dir, artifacts(dir).first))[0, 2]
      assert_match(/^DEDUP_TOKEN: \S+/, result.stderr, "the identity libFuzzer's -minimize_crash keeps")
      assert_ruby_backtrace_above_the_report(result.stderr, "AddressSanitizer: heap-use-after-free",
                                             "dummy_test_one_input")
      assert_match(%r{^==ruzzy== Reproduce: .*ruzzy dummy \./#{artifacts(dir).first}$}, result.stderr)
      assert_match(%r{^==ruzzy== Minimise:  .*ruzzy dummy -minimize_crash=1 -runs=100000 \./#{artifacts(dir).first}$},
                   result.stderr)
    end
  end

  def test_dummy_with_a_manual_preload_as_in_ruzzy_zero_eight
    in_tmpdir do |dir|
      asan = ruby("-rruzzy", "-e", "print Ruzzy::ASAN_PATH").stdout
      result = ruby("-rruzzy", "-e", "Ruzzy.dummy", "--", "-seed=1", "-runs=#{runs(2_000_000)}",
                    chdir: dir, env: { "LD_PRELOAD" => asan })
      assert_exit 77, result
      assert_match(/heap-use-after-free/, result.stderr)
    end
  end

  def test_dummy_without_the_preload_says_what_to_do
    result = ruby("-rruzzy", "-e", "Ruzzy.dummy")
    assert_exit 1, result
    assert_match(/Ruzzy\.dummy needs AddressSanitizer preloaded: run `ruzzy dummy`/, result.stderr)
  end

  def test_undefined_behaviour_is_reported_under_ubsan
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "signed-integer-overflow")
      write_harness(dir, "require_relative 'faults'\ndef check(data) = Faults.ubsan(data)\n" \
                         "Ruzzy.fuzz(->(data) { check(data); nil })")
      result = ruzzy("--sanitizer=undefined", "harness.rb", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/INFO: ruzzy: using the preloaded libFuzzer in .*ubsan_with_fuzzer\.so/, result.stderr)
      assert_match(/runtime error: signed integer overflow/, result.stderr)
      above = /#{RUBY_BACKTRACE}(?:\tfrom \S*harness\.rb:.*\n)+\S*faults\.c:\d+:\d+: runtime error:/
      assert_match(above, result.stderr, "the Ruby backtrace above the report")
      assert_match(/^\tfrom \S*harness\.rb:\d+:#{label("check")}$/, result.stderr)
      assert_equal "U", File.binread(File.join(dir, artifacts(dir).first))[0]
      assert_match(%r{^==ruzzy== Reproduce: .*ruzzy --sanitizer\\=undefined harness\.rb \./#{artifacts(dir).first}$},
                   result.stderr)
      assert_equal 1, result.stderr.scan("==ruzzy== Reproduce:").size
    end
  end

  # What a user does (docs/c-extensions.md): `ruzzy build-ext` on the
  # source tree, then `ruzzy --sanitizer=address` on a harness. The report
  # of a memory error in C shows where in the harness the target was.
  def test_a_memory_error_in_an_extension_built_by_build_ext_shows_the_ruby_backtrace
    in_tmpdir do |dir|
      FileUtils.cp_r(File.join(FIXTURES, "planted_bugs"), dir)
      project = File.join(dir, "planted_bugs")
      assert_exit 0, ruzzy("build-ext", project)
      harness = write_harness(project, "require 'planted_bugs'\ndef decode(data) = PlantedBugs.c('FREE' + data)\n" \
                                       "Ruzzy.fuzz(->(data) { decode(data); nil })")
      result = ruzzy("--sanitizer=address", "-I", "lib", harness, "-seed=1", "-runs=#{runs(100_000)}", chdir: project)
      assert_exit 77, result
      assert_ruby_backtrace_above_the_report(result.stderr, "AddressSanitizer: heap-use-after-free", "decode")
    end
  end

  # The Ruby backtrace of the fuzz target, printed where the report starts:
  # the target's frames (+frame+ among them), not ruzzy's start-up.
  def assert_ruby_backtrace_above_the_report(stderr, report, frame)
    backtrace = stderr[/#{RUBY_BACKTRACE}((?:\tfrom .*\n)+)(?==+\d+==\s*ERROR: #{report})/, 1]
    refute_nil backtrace, "the Ruby backtrace right above the report:\n#{stderr[0, 3000]}"
    assert_match(/:\d+:#{label(frame)}$/, backtrace)
    refute_match(%r{exe/ruzzy|lib/ruzzy/}, backtrace, "ruzzy's own start-up is left out")
  end

  def test_a_segfault_under_asan_keeps_the_ruby_backtrace
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, "require_relative 'faults'\ndef parse(data) = Faults.segv(data)\n" \
                         "Ruzzy.fuzz(->(data) { parse(data); nil })")
      File.write(File.join(dir, "input"), "S")
      result = ruzzy("--sanitizer=address", "harness.rb", "input", chdir: dir)
      assert_exit 77, result
      assert_match(/ERROR: libFuzzer: deadly signal\n==ruzzy== Ruby backtrace of the fuzz target/, result.stderr)
      assert_match(/harness\.rb:\d+:in [`'](?:Object#)?parse'/, result.stderr)
      assert_match(/#\d+ 0x\h+ in faults_segv .*faults\.c/, result.stderr, "the native stack follows")
      assert_match(/^==ruzzy== Reproduce: .*ruzzy --sanitizer\\?=address harness\.rb input$/, result.stderr)
    end
  end

  # Ruby holds memory it never frees: libFuzzer's per-input leak checks
  # would only announce that they gave up. Every line is a "function" to
  # libFuzzer: NEW_FUNC lines would flood the log.
  def test_no_leak_check_or_new_function_noise_under_asan
    in_tmpdir do |dir|
      write_harness(dir, "require 'ipaddr'\nRuzzy.fuzz(->(data) { IPAddr.new(data) rescue nil; nil })")
      result = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 0, result
      assert_match(/NEW /, result.stderr, "the run found coverage")
      refute_match(/leak detection/, result.stderr)
      refute_match(/NEW_FUNC/, result.stderr)
    end
  end

  # docs/c-extensions.md, step 2, for a .gem file: the environment it gives
  # compiles with clang, Ruby's -O2 and the sanitizer, and the installed
  # gem fuzzes under the preload.
  def test_a_gem_file_builds_as_the_guide_says
    in_tmpdir do |dir|
      FileUtils.cp_r(%w[ext lib].map { |name| File.join(EXAMPLES, "record_decoder", name) }, dir)
      File.write(File.join(dir, "record_decoder.gemspec"), <<~RUBY)
        Gem::Specification.new do |spec|
          spec.name = "record_decoder"
          spec.version = "0.1.0"
          spec.summary = "ruzzy's example extension"
          spec.authors = ["ruzzy"]
          spec.files = Dir["lib/**/*.rb", "ext/**/*.{c,rb}"]
          spec.extensions = ["ext/record_decoder/extconf.rb"]
        end
      RUBY
      assert_exit 0, run_command("gem", "build", "record_decoder.gemspec", chdir: dir)
      env = guide_environment
      installed = run_command("gem", "install", "./record_decoder-0.1.0.gem", "--local", "--install-dir", "vendor/fuzz",
                              chdir: dir, env:)
      assert_exit 0, installed
      log = File.read(Dir.glob(File.join(dir, "vendor", "fuzz", "extensions", "**", "gem_make.out")).first)
      assert_match(/^clang .* -O2 .*-fsanitize=address,fuzzer-no-link .*-c record_decoder\.c$/, log)
      write_harness(dir,
                    "require 'record_decoder'\nRuzzy.fuzz(->(data) { RecordDecoder.decode(data) rescue nil; nil })")
      gem_path = [File.join(dir, "vendor", "fuzz"), *Gem.path].join(":")
      result = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(2000)}",
                     chdir: dir, env: { "GEM_PATH" => gem_path })
      assert_includes [0, 77], result.exitstatus, result.stderr
      assert_match(/INFO: Loaded 2 modules/, result.stderr, "the extension's counters and ruzzy's")
    end
  end

  # The variables the guide's `$ export` lines set ("$NAME" expanded).
  def guide_environment
    exports = File.read(File.join(ROOT, "docs", "c-extensions.md")).scan(/^\$ export (.*)$/).flatten
    exports.flat_map { |line| line.scan(/(\w+)=("[^"]*"|\S+)/) }.each_with_object({}) do |(name, value), env|
      env[name] = value.delete('"').gsub(/\$(\w+)/) { env.fetch(::Regexp.last_match(1)) }
    end
  end

  def test_user_sanitizer_options_override_the_defaults
    in_tmpdir do |dir|
      result = ruzzy("dummy", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir,
                                                                     env: { "ASAN_OPTIONS" => "exitcode=42" })
      assert_exit 42, result
    end
  end

  # The preloads name this machine's llvm-symbolizer themselves: the
  # runtime's own choice is its build machine's LLVM version only
  # (/usr/bin/llvm-symbolizer-21 in Debian sid's), so the precompiled gem
  # printed every C frame as an address on a machine with another LLVM.
  def test_the_llvm_symbolizer_on_path_names_the_c_frames
    symbolizer = ENV.fetch("PATH").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, "llvm-symbolizer") }
                    .find { |path| File.executable?(path) } || Dir["/usr/bin/llvm-symbolizer-*"].max
    prerequisite! symbolizer, "no llvm-symbolizer (apt-get install llvm)"
    in_tmpdir do |dir|
      tools = File.join(dir, "tools")
      FileUtils.mkdir_p(tools)
      File.symlink(symbolizer, File.join(tools, "llvm-symbolizer"))
      result = ruzzy("dummy", "-seed=1", "-runs=#{runs(2_000_000)}", chdir: dir,
                                                                     env: { "ASAN_OPTIONS" => "help=1",
                                                                            "PATH" => "#{tools}:#{ENV.fetch("PATH")}" })
      assert_exit 77, result
      assert_match(%r{external_symbolizer_path\n.*\(Current Value: #{Regexp.escape(tools)}/llvm-symbolizer\)},
                   result.stderr)
      assert_match(/^    #0 0x\h+ in check \S*dummy\.c:\d+/, result.stderr)
    end
  end

  # Ruby leaves sanitized C frames early with a longjmp AddressSanitizer
  # does not see; a `break` or `throw` out of a block they yield to raises
  # nothing, so no raise hook clears their redzones. On the old code a
  # later input's raise (in ruzzy's own clearing, or in its report's
  # memcpy) met them, and AddressSanitizer, describing a frame long gone,
  # died on its own check ("CHECK failed: asan_thread.cpp:370"): a campaign
  # worker ended "without a finding", or filed a stack-buffer-overflow that
  # is not there. (Within the input that jumps, what follows the jump can
  # still meet them: see ext/ruzzy/src/findings/sanitizer_stack.rs.)
  def test_break_and_throw_out_of_sanitized_c_frames_invent_nothing_in_a_campaign
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          raise ArgumentError, "planted" if data.getbyte(0).to_i.odd?

          Faults.deep_yield(data) { break }
          catch(:out) { Faults.deep_yield(data) { throw :out } }
          nil
        end)
      RUBY
      result = ruzzy("--sanitizer=address", "--keep-going", "--workers=1", "harness.rb", "-seed=1",
                     "-runs=#{runs(3000)}", chdir: dir)
      assert_exit 77, result
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      refute_match(/AddressSanitizer: CHECK failed|AddressSanitizer: nested bug|ERROR: AddressSanitizer/, log)
      refute_match(/without a finding/, result.stderr)
      assert_equal(["ArgumentError: planted"], finding_groups(dir).map { |group| group["title"] })
    end
  end

  # Enumerator#next runs its block on a fiber's stack, which Ruby allocates
  # itself: AddressSanitizer's __asan_handle_no_return refuses to clear it
  # ("ASan is ignoring requested __asan_handle_no_return"), and Ruby gives
  # the stack of a fiber abandoned while its block was inside sanitized C
  # frames to the next fiber, poisoning and all. A raise out of those
  # frames on a fiber, and abandoned enumerators, invent no report.
  def test_fibers_raising_out_of_sanitized_c_frames_invent_nothing
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          tokens = Enumerator.new do |out|
            Faults.deep_raise("T") # uses the fiber's stack, with libc's memset
            Faults.deep_yield(data) do
              raise ArgumentError, "from a fiber" if data.getbyte(0).to_i.odd?

              out << data # suspends the fiber inside the C frames
            end
          end
          tokens.next
          nil
        rescue ArgumentError
          nil
        end)
      RUBY
      result = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(3000)}", chdir: dir)
      assert_exit 0, result
      # No false report. (AddressSanitizer may still warn that it ignores
      # its own clearing on the fiber's stack: on Ruby 3.3 it is called by
      # AddressSanitizer's longjmp interceptor, when Ruby's raise uses an
      # intercepted longjmp, not by ruzzy.)
      refute_match(/AddressSanitizer: CHECK failed|AddressSanitizer: nested bug|ERROR: AddressSanitizer/, result.stderr)
      assert_match(/Done #{runs(3000)} runs/, result.stderr)
    end
  end

  # A campaign keeps inputs that raise out of its corpus (the worker files
  # the finding and returns -1). clang 14's libFuzzer, which the preloads
  # are built from on Debian 12, ignores -1: on the old code about one
  # corpus input in ten raised under --sanitizer=address. Raises from C
  # (rb_raise) and from Ruby, each reaching code that other inputs do not.
  def test_inputs_that_raise_stay_out_of_an_asan_campaigns_corpus
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          sum = Faults.letters(data)
          raise IndexError, "sum \#{sum}" if sum > 3 && (sum % 7).zero?
          nil
        end)
      RUBY
      result = ruzzy("--sanitizer=address", "--keep-going", "--workers=1", "harness.rb", "-seed=1",
                     "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 77, result
      assert_includes finding_groups(dir).map { |group| group["title"][/\A\w+/] }, "ArgumentError"
      corpus = Dir.glob(File.join(dir, "ruzzy-findings", "corpus", "*"))
      assert_operator corpus.size, :>=, 2, "the corpus grew"
      raising = corpus.select { |path| File.binread(path).each_byte.any? { |byte| byte > 200 } }
      assert_empty raising.map { |path| File.binread(path).inspect }, "inputs that raise from C"
      replay = ruzzy("--sanitizer=address", "harness.rb", *corpus, chdir: dir)
      assert_exit 0, replay
      assert_match(/Executed .* in \d+ ms/, replay.stderr)
    end
  end

  # A worker whose own report of a finding dies on an AddressSanitizer
  # CHECK (here made to, in the findings store; the stack poisoning above
  # did it in ruzzy's report code) is ruzzy's failure: filed as an
  # internal error named by the CHECK line, with a request to report it.
  # On the old code it was filed as a crash "the process ended without a
  # report", beside the empty directory of the exception's group, which
  # the worker had created before it died.
  def test_a_worker_dying_on_an_asan_check_in_its_report_is_an_internal_error
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        File.singleton_class.prepend(Module.new do
          def binwrite(path, *)
            Faults.asan_check("K") if path.include?("ruzzy-findings") && File.basename(path).start_with?("input")
            super
          end
        end)
        Ruzzy.fuzz(->(data) { data.bytesize > 1 ? raise(ArgumentError, "planted") : nil })
      RUBY
      result = ruzzy("--sanitizer=address", "--keep-going", "--workers=1", "harness.rb", "-seed=1",
                     "-max_total_time=5", chdir: dir)
      assert_exit 77, result
      check = /AddressSanitizer: CHECK failed: asan_thread\.cpp:\d+ "\(\(ptr\[0\] == kCurrentStackFrameMagic\)\)/
      assert_match(/^  NEW  internal-\h+ \(internal\): #{check.source} != \(0\)"$/, result.stderr)
      assert_match(%r{please report it with ruzzy-findings/internal-\h+/report\.txt at https://}, result.stderr)
      groups = finding_groups(dir)
      assert_equal(["internal"], groups.map { |group| group["kind"] })
      findings = File.join(dir, "ruzzy-findings")
      assert_match check, File.read(Dir.glob(File.join(findings, "internal-*", "report.txt")).first)
      incomplete = Dir.children(findings).reject { |name| name.start_with?(".") || name == "corpus" }
                      .select { |name| File.directory?(File.join(findings, name)) }
                      .reject { |name| File.file?(File.join(findings, name, "group.json")) }
      assert_empty incomplete, "group directories without their group"
    end
  end

  # Internal errors are named by their own line, not as a crash "without a
  # report": a sanitizer's failing check or nested report, a Rust panic.
  def test_internal_errors_are_named_by_their_line
    require "ruzzy/findings/identity"
    reports = {
      "AddressSanitizer: CHECK failed: asan_thread.cpp:370 \"((ptr[0] == kCurrentStackFrameMagic)) != (0)\" " \
      "(0x0, 0x0) (tid=7)\n    #0 0x7f in __asan::CheckUnwind() asan_rtl.cpp.o\n" =>
        "AddressSanitizer: CHECK failed: asan_thread.cpp:370 \"((ptr[0] == kCurrentStackFrameMagic)) != (0)\"",
      "=====\n==ruzzy== Ruby backtrace of the fuzz target (innermost last):\n" \
      "AddressSanitizer: nested bug in the same thread, aborting.\n" =>
        "AddressSanitizer: nested bug in the same thread",
      "==ruzzy== ERROR: internal error in ruzzy's native code (a Rust panic at src/coverage/hook.rs:12: boom).\n" =>
        "ruzzy: internal error in ruzzy's native code (a Rust panic at src/coverage/hook.rs:12)"
    }
    reports.each do |report, title|
      identity = Ruzzy::Findings::Identity.of_report(report)
      assert_equal ["internal", title], [identity.kind, identity.title], report
    end
  end

  # The groups of a campaign's findings directory (group.json of each).
  def finding_groups(dir)
    Dir.glob(File.join(dir, "ruzzy-findings", "*", "group.json")).map { |path| JSON.parse(File.read(path)) }
  end

  def test_unknown_sanitizer_is_a_usage_error
    result = ruzzy("--sanitizer=thread", "x.rb")
    assert_exit 2, result
    assert_match(/unknown sanitizer "thread"; use one of address, undefined, asan, ubsan/, result.stderr)
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# Fuzzing for real, in child processes: findings, artifacts, return values,
# exit statuses, signals and the garbage collector.
class TestFuzzing < Minitest::Test
  RAISE_ON_LONG = <<~RUBY
    Ruzzy.fuzz(lambda do |data|
      File.binwrite("last_input", data)
      raise ArgumentError, "input too long: \#{data.bytesize} bytes" if data.bytesize > 3
      nil
    end)
  RUBY

  def test_exception_is_a_finding_with_the_raising_input_saved
    in_tmpdir do |dir|
      write_harness(dir, RAISE_ON_LONG)
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(100_000)}", chdir: dir)
      assert_exit 77, result
      crashes = artifacts(dir)
      assert_equal 1, crashes.size, result.output
      assert_equal File.binread(File.join(dir, "last_input")), File.binread(File.join(dir, crashes.first))
      assert_match(/ERROR: ruzzy: uncaught Ruby exception in the fuzz target/, result.stderr)
      assert_match(/^ArgumentError: input too long: \d+ bytes$/, result.stderr)
      assert_match(/^    from .*harness\.rb:\d+:#{label("block in <top (required)>")}$/, result.stderr)
      assert_match(%r{Test unit written to \./crash-\h{40}}, result.stderr)
    end
  end

  # A method the comparison hooks wrap raises as it does without ruzzy:
  # one frame, not the hook's beside it (Ruby 3.4 would name the hook's
  # module), in the report and in the frames ClusterFuzz groups by.
  def test_an_exception_from_a_hooked_method_shows_one_frame_for_it
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        def convert(data) = data.to_i(1)
        Ruzzy.fuzz(->(data) { convert(data) })
      RUBY
      File.write(File.join(dir, "one"), "1")
      result = ruzzy("harness.rb", "one", chdir: dir)
      assert_exit 77, result
      assert_match(/^ArgumentError: invalid radix 1$/, result.stderr)
      assert_equal 1, result.stderr.scan(/^    from .*:in .*to_i'$/).size, result.stderr
      assert_match(/^    #0 0x0 in \S*to_i .*harness\.rb:\d+\n    #1 0x0 in \S*convert /, result.stderr)
      refute_match(/Ruzzy::/, result.stderr[/^ArgumentError.*?DEDUP_TOKEN/m])
    end
  end

  def test_artifact_prefix_and_exact_artifact_path
    in_tmpdir do |dir|
      write_harness(dir, RAISE_ON_LONG)
      FileUtils.mkdir_p(File.join(dir, "out"))
      assert_exit 77, ruzzy("harness.rb", "-seed=1", "-artifact_prefix=out/", chdir: dir)
      assert_equal 1, artifacts(File.join(dir, "out")).size
      assert_exit 77, ruzzy("harness.rb", "-seed=1", "-exact_artifact_path=the-bug", chdir: dir)
      assert_equal File.binread(File.join(dir, "last_input")), File.binread(File.join(dir, "the-bug"))
    end
  end

  def test_runs_limit_ends_normally
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.bytesize.even? ? nil : 0 })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(5000)}", chdir: dir)
      assert_exit 0, result
      assert_match(/Done #{runs(5000)} runs/, result.stderr)
      assert_match(/stat::number_of_executed_units: #{runs(5000)}/, result.stderr)
      assert_empty artifacts(dir)
    end
  end

  def test_input_is_a_binary_string
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda do |data|
          raise "wrong encoding \#{data.encoding}" unless data.encoding == Encoding::BINARY
          raise "not a String" unless data.instance_of?(String)
        end)
      RUBY
      assert_exit 0, ruzzy("harness.rb", "-seed=1", "-runs=#{runs(2000)}", chdir: dir)
    end
  end

  def test_bad_return_value_is_a_usage_error_without_artifact
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_data) { :oops })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=10", chdir: dir)
      assert_exit 2, result
      assert_match(/TypeError: the fuzz target did not return an integer or nil: it returned :oops \(Symbol\)/,
                   result.stderr)
      assert_empty artifacts(dir)
    end
  end

  # Inputs starting with "R" reach new code; returns nil or -1 for them.
  def rejecting_target(verdict)
    <<~RUBY
      Ruzzy.fuzz(lambda do |data|
        if data.getbyte(0) == 0x52
          case data.getbyte(1).to_i % 8
          when 0 then :a
          when 1 then :b
          when 2 then :c
          when 3 then :d
          else :e
          end
          return #{verdict}
        end
        nil
      end)
    RUBY
  end

  # Rejecting (-1, or any other Integer but 0, as in Ruzzy 0.8 where libFuzzer
  # got the value) must keep every "R" input out of the corpus, while the
  # control run keeps some.
  def test_rejected_inputs_never_reach_the_corpus
    in_tmpdir do |dir|
      { "reject" => "-1", "other" => "5", "keep" => "nil" }.each do |name, verdict|
        corpus = File.join(dir, "corpus-#{name}")
        FileUtils.mkdir_p(corpus)
        write_harness(dir, rejecting_target(verdict), name: "#{name}.rb")
        assert_exit 0, ruzzy("#{name}.rb", "-seed=1", "-runs=#{runs(60_000)}", corpus, chdir: dir)
      end
      starts_with_r = lambda do |name|
        Dir.children(File.join(dir, "corpus-#{name}")).count do |f|
          File.binread(File.join(dir, "corpus-#{name}", f)).start_with?("R")
        end
      end
      assert_operator starts_with_r.call("keep"), :>, 0, "control run never reached the R branch"
      assert_equal 0, starts_with_r.call("reject")
      assert_equal 0, starts_with_r.call("other"), "an Integer other than 0 must reject the input, as -1 does"
    end
  end

  # A library required on first use shares the counters fitted to what was
  # loaded before fuzzing: a note says so and what would fit; not when a
  # file is only replayed, where the counters do not matter.
  def test_code_loaded_while_fuzzing_that_outgrows_the_map_is_named
    in_tmpdir do |dir|
      File.write(File.join(dir, "big.rb"), (1..3000).map { |i| "X#{i} = #{i}\n" }.join)
      write_harness(dir, "Ruzzy.fuzz(->(data) { require_relative 'big' if data.start_with?('L'); nil })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(50_000)}", chdir: dir)
      assert_exit 0, result
      note = result.stderr[/^INFO: ruzzy: code loaded while fuzzing .*$/].to_s
      assert_match(%r{\(.*/big\.rb and before it\) brings the instrumented code to 30\d\d lines and branch arms}, note)
      assert_includes note, "more than 2048 edge counters hold well: require it before Ruzzy.fuzz, or --map-size=8192"
      quiet = ruzzy("--map-size=2048", "harness.rb", "-seed=1", "-runs=#{runs(50_000)}", chdir: dir)
      refute_match(/code loaded while fuzzing/, quiet.stderr, "a size the user chose is not second-guessed")
      File.write(File.join(dir, "load"), "L")
      replay = ruzzy("harness.rb", "load", chdir: dir)
      assert_exit 0, replay
      assert_match(/Executed load in/, replay.stderr, "the replay loaded the library")
      refute_match(/code loaded while fuzzing/, replay.stderr, "a replay is not told to resize the map")
    end
  end

  # A library that autoloads its parts (kramdown's parsers, Rack's
  # middleware) has them counted when the map is fitted: the files its own
  # autoloads will load, not RubyGems' (registered before any harness), so
  # using them while fuzzing needs no note.
  def test_the_files_a_librarys_autoloads_will_load_are_counted_in_the_map
    in_tmpdir do |dir|
      constants = (1..3000).map { |i| "    X#{i} = #{i}\n" }.join
      File.write(File.join(dir, "big.rb"), "module Lib\n  module Big\n#{constants}  end\nend\n")
      File.write(File.join(dir, "lib.rb"), "module Lib\n  autoload :Big, File.join(__dir__, \"big\")\nend\n")
      write_harness(dir, <<~RUBY)
        require_relative "lib"
        Ruzzy.fuzz(->(data) { Lib::Big::X1 if data.start_with?("L"); nil })
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(50_000)}", chdir: dir)
      assert_exit 0, result
      fitted = Regexp.new("^INFO: ruzzy: 8192 edge counters for \\d+ lines and branch arms of instrumented code " \
                          "and 300\\d lines in the files its autoloads will load ")
      assert_match(fitted, result.stderr)
      refute_match(/code loaded while fuzzing/, result.stderr)
      write_harness(dir, "Ruzzy.fuzz(->(data) { nil })", name: "plain.rb")
      plain = ruzzy("plain.rb", "-runs=1", chdir: dir)
      assert_match(/^INFO: ruzzy: 2048 edge counters for \d+ lines and branch arms of instrumented code \(/,
                   plain.stderr)
    end
  end

  def test_second_fuzz_call_raises
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_data) { Ruzzy.fuzz(->(_d) {}, ['again']) })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=10", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError \(Ruzzy::AlreadyFuzzingError\): Ruzzy\.fuzz was already called in this process/,
                   result.stderr)
    end
  end

  def test_plain_ruby_runs_a_harness_too
    in_tmpdir do |dir|
      write_harness(dir, RAISE_ON_LONG)
      result = ruby("harness.rb", "-seed=1", "-runs=#{runs(100_000)}", chdir: dir)
      assert_exit 77, result
      assert_equal 1, artifacts(dir).size
    end
  end

  def test_ctrl_c_ends_with_final_stats
    skip "signals are too slow to arrive under GC.stress" if GC_STRESS
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.bytesize > 100 ? 0 : nil })")
      Open3.popen3("ruzzy", "harness.rb", "-seed=1", "-max_total_time=120", chdir: dir) do |_in, out, err, wait|
        log = +""
        # libFuzzer's SIGINT handler is in place before it prints INITED.
        log << err.readpartial(4096) until log.include?("INITED")
        Process.kill("INT", wait.pid)
        log << err.read
        out.read
        status = wait.value
        assert_equal 72, status.exitstatus, log
        assert_match(/libFuzzer: run interrupted; exiting/, log)
        assert_match(/stat::number_of_executed_units: \d+/, log)
        assert_empty artifacts(dir)
      end
    end
  end

  def test_target_survives_gc_stress_and_compaction
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        count = 0
        Ruzzy.fuzz(lambda do |data|
          count += 1
          GC.compact if (count % 100).zero?
          GC.stress = true if count == 500
          GC.stress = false if count == 520
          data.bytes.sum
          nil
        end)
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(2000)}", chdir: dir)
      assert_exit 0, result
      assert_match(/Done #{runs(2000)} runs/, result.stderr)
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/installed_gems"
require "ruzzy/findings/identity"

# Campaigns (`ruzzy --keep-going`, docs/campaigns.md): every finding is
# recorded, grouped, and the run goes on; `ruzzy findings` lists, shows,
# replays and minimises the groups.
class TestCampaign < Minitest::Test
  include InstalledGems

  # Two bugs in two methods, each reached by one first byte, and a
  # KeyError that needs a longer input (for minimising).
  TWO_BUGS = <<~RUBY
    def header(data) = data.getbyte(0) == 1 && raise(TypeError, "bad header")
    def body(data) = data.getbyte(0) == 2 && raise(RangeError, "bad body")
    Ruzzy.fuzz(lambda do |data|
      header(data)
      body(data)
      raise KeyError, "bad key" if data.start_with?("KEY") && data.bytesize > 6
      nil
    end)
  RUBY

  # Code loaded while fuzzing that outgrows the map is worth a note: a
  # campaign shows it once, where the user reads (the workers' INFO lines
  # go only to the log).
  def test_a_campaign_shows_the_note_on_code_that_outgrew_the_map_once
    in_tmpdir do |dir|
      File.write(File.join(dir, "big.rb"), (1..3000).map { |i| "X#{i} = #{i}\n" }.join)
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda do |data|
          require_relative "big" if data.start_with?("L")
          raise KeyError, "bad key" if data.start_with?("K")
          nil
        end)
      RUBY
      result = ruzzy("--keep-going", "--workers=1", "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir)
      assert_exit 77, result
      notes = result.stderr.scan(/^ruzzy: code loaded while fuzzing \(.*big\.rb and before it\) .*--map-size=8192$/)
      assert_equal 1, notes.size, result.stderr
    end
  end

  def test_keep_going_records_every_exception_grouped_and_exits_77_at_the_end
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir)
      assert_equal %w[exception exception exception], groups.map { |group| group[:kind] }, result.stderr
      titles = groups.map { |group| group[:title] }.sort
      assert_equal ["KeyError: bad key", "RangeError: bad body", "TypeError: bad header"], titles
      assert(groups.any? { |group| group[:findings] > 1 }, "fuzzing went on after the first finding")
      assert_match(%r{ruzzy: \d+ finding\(s\) in 3 group\(s\), in ruzzy-findings/}, result.stderr)
      assert_match(/NEW  exception-\h{10} \(exception\): TypeError: bad header/, result.stderr)
      assert_empty artifacts(dir), "no crash file outside the findings directory"
      assert File.directory?(File.join(dir, "ruzzy-findings", "corpus")), "a corpus kept for the next worker"
    end
  end

  def test_findings_replays_shows_and_minimises_the_groups
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      assert_exit 77, ruzzy("--findings=found", "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir)
      replay = ruzzy("findings", "found", "replay", chdir: dir)
      assert_exit 77, replay
      assert_equal 3, replay.stdout.scan(/^FAILS .* reproduced$/).size, replay.stdout

      key = list_groups(dir, "found").find { |group| group[:title].start_with?("KeyError") }
      shown = ruzzy("findings", "found", "show", key[:name][0, 14], chdir: dir)
      assert_exit 0, shown
      assert_match(/DEDUP_TOKEN: KeyError--harness\.rb:<top>/, shown.stdout)
      assert_match(%r{^Reproduce: .*ruzzy .*harness\.rb .*found/#{key[:name]}/input$}, shown.stdout)

      minimised = ruzzy("findings", "found", "minimise", key[:name], "-runs=#{runs(2000)}", chdir: dir)
      assert_exit 0, minimised
      input = File.binread(File.join(dir, "found", key[:name], "input"))
      assert_equal 7, input.bytesize, minimised.stdout
      assert input.start_with?("KEY")
    end
  end

  # Two bugs nested: an "AB" input longer than 8 bytes is a TypeError, but
  # one of 30 to 40 bytes a RangeError first, so shrinking a long input of
  # the first bug down to 9 bytes crosses the second one's band.
  NESTED_BUGS = <<~RUBY
    def band(data) = raise(RangeError, "30 to 40 bytes")
    def long(data) = raise(TypeError, "longer than 8 bytes")
    Ruzzy.fuzz(lambda do |data|
      next unless data.start_with?("AB")
      band(data) if data.bytesize.between?(30, 40)
      long(data) if data.bytesize > 8
      nil
    end)
  RUBY

  # libFuzzer's -minimize_crash stops at the first smaller input that fails
  # another way; `ruzzy findings minimise` files that one as its own group
  # and goes on to the smallest input that fails the same way, then says
  # why it stopped. Seeded: with -seed=2 libFuzzer's own stops in the band.
  def test_minimising_goes_on_past_a_smaller_input_that_fails_another_way
    # The minimiser is Ruby in the command's own process; under GC.stress
    # the harness's runs alone (two inputs of the campaign took over 120 s)
    # would outlast the commands' hard timeout.
    skip "thousands of inputs in dozens of processes are too slow under GC.stress" if GC_STRESS
    in_tmpdir do |dir|
      write_harness(dir, NESTED_BUGS)
      FileUtils.mkdir_p(File.join(dir, "corpus"))
      File.write(File.join(dir, "corpus", "long"), "AB#{"a" * 60}")
      # -runs=1: the campaign files the corpus's 62-byte input as it is.
      assert_exit 77, ruzzy("--findings=found", "--workers=1", "harness.rb", "corpus", "-seed=1", "-runs=1",
                            chdir: dir)
      long = list_groups(dir, "found").find { |group| group[:title].start_with?("TypeError") }
      assert_equal 62, long[:bytes]
      own = ruzzy("harness.rb", "-minimize_crash=1", "-exact_artifact_path=own", "-runs=2000", "-seed=2",
                  "corpus/long", chdir: dir)
      assert_match(/mismatch in dedup tokens/, own.output, "libFuzzer's own minimising stops in the band")

      minimised = ruzzy("findings", "found", "minimise", long[:name], "-runs=4000", "-seed=2", chdir: dir)
      assert_exit 0, minimised
      assert_equal 9, File.size(File.join(dir, "found", long[:name], "input")), minimised.stdout
      assert_match(/^#{long[:name]}: 62 -> 9 bytes /, minimised.stdout)
      band = list_groups(dir, "found").find { |group| group[:title].start_with?("RangeError") }
      refute_nil band, "the other bug is filed as its own group: #{minimised.stdout}"
      assert_includes 30..40, band[:bytes]
      assert_match(/^met another bug: #{band[:name]} RangeError: 30 to 40 bytes \(a new group, \d+ bytes\)$/,
                   minimised.stdout)
      assert_match(/^stopped: nothing smaller failed the same way in 8 rounds in a row /, minimised.stdout)
    end
  end

  # The harness fuzzes a library installed in a gem home: the status line's
  # "yours" counts the library's lines, not only the harness's.
  def test_the_lines_reached_in_your_code_count_the_library_the_harness_requires
    in_tmpdir do |dir|
      home = File.join(dir, "gems")
      install_tiny_gems(home)
      harness = write_harness(dir, "require 'tinyparse'\nRuzzy.fuzz(->(data) { Tinyparse.parse(data); nil })")
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-max_total_time=12",
                     chdir: dir, env: gem_path_env(home))
      assert_exit 0, result
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      reached = log.scan(/^==ruzzy== reached: (\d+) lines and \d+ edges of your code/).last
      refute_nil reached, log
      assert_operator Integer(reached.first), :>, File.readlines(harness).size,
                      "the harness has #{File.readlines(harness).size} lines; the rest are tinyparse's"
    end
  end

  # A harness of several lines around a C extension, without a branch of
  # its own: each line it runs for every input is a line of yours reached,
  # not only the first of its block (they share the block's counter).
  AROUND_C = <<~RUBY
    require_relative "faults"
    Ruzzy.fuzz(lambda do |data|
      size = data.bytesize
      head = data.byteslice(0, 4)
      tail = data.byteslice(4..)
      Faults.segv(head.delete("S"))
      total = size + tail.to_s.bytesize
      total.to_s
      nil
    end)
  RUBY
  AROUND_C_LINES = 6

  def assert_every_line_of_the_block_reached(dir, *options)
    write_harness(dir, AROUND_C)
    result = ruzzy(*options, "--keep-going", "harness.rb", "-seed=1", "-max_total_time=5", chdir: dir)
    assert_exit 0, result
    log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
    reached = log.scan(/^==ruzzy== reached: (\d+) lines and \d+ edges of your code/).last
    refute_nil reached, log
    assert_operator Integer(reached.first), :>=, AROUND_C_LINES, "the lines the target runs for every input:\n#{log}"
  end

  def test_every_line_a_harness_runs_around_a_c_extension_is_reached
    in_tmpdir do |dir|
      build_plain_extension(dir)
      assert_every_line_of_the_block_reached(dir)
    end
  end

  def test_every_line_a_harness_runs_around_an_asan_built_extension_is_reached
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, File.join(FIXTURES, "c_ext", "faults.c"), sanitize: "address")
      assert_every_line_of_the_block_reached(dir, "--sanitizer=address")
    end
  end

  # Failed assertions of a typed target: a group per assertion (its line
  # and kind), even when their messages read alike ("Expected: S Actual:
  # S"), whatever values they quote; each group's title, report and input
  # are those of one finding.
  def test_each_failed_assertion_is_its_own_group_whatever_its_values
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        require "minitest"

        class Checks
          include Minitest::Assertions
          attr_accessor :assertions

          def initialize = @assertions = 0
        end
        CHECKS = Checks.new

        Ruzzy.fuzz(lambda { |text|
          CHECKS.assert_equal(text[0, 10], text)
          CHECKS.assert_equal(text.delete("B"), text)
        }, Ruzzy::Gen.string(max_length: 16))
      RUBY
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-max_total_time=15", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir).sort_by { |group| group[:token] }
      harness = File.readlines(File.join(dir, "harness.rb"))
      sites = ["text[0, 10]", 'text.delete("B")'].map { |code| harness.index { |line| line.include?(code) } + 1 }
      assert_equal sites.map { |line| "exception--Minitest::Assertion--harness.rb:#{line}--assert_equal" },
                   groups.map { |group| group[:token] }, result.stderr
      groups.each do |group|
        assert_operator group[:findings], :>=, 2, "found again with other values"
        report = File.read(File.join(dir, "ruzzy-findings", group[:name], "report.txt"))
        assert_includes report, group[:title].delete_suffix("..."), "the title is that of the kept input's finding"
      end
    end
  end

  def test_a_harness_that_cannot_load_ends_the_campaign_with_its_error
    in_tmpdir do |dir|
      write_harness(dir, "raise 'no config'")
      result = ruzzy("--keep-going", "harness.rb", "-max_total_time=30", chdir: dir)
      assert_exit 1, result
      assert_match(/a worker ended with status 1 without a finding; it printed:/, result.stderr)
      assert_match(/RuntimeError: no config/, result.stderr)
    end
  end

  # A library installed the way users install theirs (a gem home on
  # GEM_PATH) and load paths given to Ruby and to ruzzy (-I, relative to
  # the directory the campaign ran in): the Reproduce line that `ruzzy
  # findings show` prints works as printed in a new shell (no GEM_PATH,
  # another directory, nothing else in the environment), and `ruzzy
  # findings replay` reproduces from anywhere. A replay whose harness
  # cannot load says so, with its own exit status.
  def test_findings_reproduce_with_the_campaigns_environment_in_a_new_shell
    in_tmpdir do |dir|
      home, gem_path = campaign_on_an_installed_library(dir)
      group = list_groups(dir).find { |found| found[:title] == "ArgumentError: planted bug" }
      refute_nil group, "the planted bug was found"
      recorded = JSON.parse(File.read(File.join(dir, "ruzzy-findings", "campaign.json")))
      assert_equal gem_path, recorded.dig("environment", "GEM_PATH")
      assert_equal File.realpath(dir), File.realpath(recorded["directory"])

      elsewhere = File.join(dir, "elsewhere")
      FileUtils.mkdir_p(elsewhere)
      findings = File.join(dir, "ruzzy-findings")
      line = ruzzy("findings", findings, "show", group[:name], chdir: elsewhere).stdout[/^Reproduce: (.*)$/, 1]
      assert_match(%r{\Acd \S+ && env .*GEM_PATH=\S+ .*ruzzy -I vendor .*harness\.rb \S+/input\z}, line)
      # A new shell: only PATH and HOME, started in another directory.
      reproduced = run_command("env", "-i", "PATH=/usr/bin:/bin", "HOME=#{elsewhere}", "sh", "-c", line,
                               chdir: elsewhere)
      assert_exit 77, reproduced
      assert_match(/ArgumentError: planted bug/, reproduced.stderr)
      replay = ruzzy("findings", findings, "replay", chdir: elsewhere)
      assert_exit 77, replay
      assert_match(/^FAILS +#{group[:name]} +reproduced$/, replay.stdout)

      # The library is gone: the harness cannot load, which says nothing
      # about the bug.
      FileUtils.mv(home, "#{home}.gone")
      assert_harness_did_not_run(findings, group[:name], elsewhere)
    end
  end

  # The campaign records the user's LD_PRELOAD, not the sanitizer preload
  # its workers add: a replay gets that preload the same way, from
  # --sanitizer in the recorded command.
  def test_the_sanitizer_preload_comes_from_the_command_not_the_recorded_environment
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { raise IndexError, 'one' if data.getbyte(0) == 1; nil })")
      assert_exit 77, ruzzy("--sanitizer=address", "--keep-going", "harness.rb", "-seed=1", "-runs=#{runs(20_000)}",
                            chdir: dir, env: { "LD_PRELOAD" => nil })
      recorded = JSON.parse(File.read(File.join(dir, "ruzzy-findings", "campaign.json")))
      assert recorded["environment"].key?("LD_PRELOAD")
      assert_nil recorded.dig("environment", "LD_PRELOAD")
      assert_includes recorded["command"], "--sanitizer=address"
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_exit 77, replay
      assert_match(/^FAILS +exception-\h+ +reproduced$/, replay.stdout)
    end
  end

  # A finding that ends the worker (a segfault in C code) is filed from
  # the artifact the worker left, which is then deleted: the group's report
  # names the group's input instead, and its Reproduce line works as
  # printed. Nothing the campaign leaves (reports, its output, its log)
  # names the worker's artifacts directory, which is gone.
  def test_a_filed_report_names_the_groups_input_and_reproduces_it
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, "require_relative 'faults'\nRuzzy.fuzz(->(data) { Faults.segv(data); nil })")
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-max_total_time=6", chdir: dir)
      assert_exit 77, result
      group = list_groups(dir).find { |found| found[:kind] == "signal" }
      refute_nil group, result.stderr
      report = File.read(File.join(dir, "ruzzy-findings", group[:name], "report.txt"))
      input = File.join(File.realpath(dir), "ruzzy-findings", group[:name], "input")
      log = File.read(File.join(dir, "ruzzy-findings", "campaign.log"))
      { "report.txt" => report, "the campaign's output" => result.output, "campaign.log" => log }.each do |name, text|
        refute_match(%r{\.artifacts/}, text, "#{name} names a worker's artifacts, deleted once filed")
      end
      group_dir = Regexp.escape(File.dirname(input))
      written = %r{^artifact_prefix='#{group_dir}/'; Test unit written to #{Regexp.escape(input)}$}
      assert_match(written, report)
      assert_match(written, log, "the log names where the worker's artifact was filed")
      assert_match(/^==ruzzy== Minimise:  ruzzy findings \S+ minimise #{group[:name]}$/, report)
      line = report[/^==ruzzy== Reproduce: (.*#{Regexp.escape(input)})$/, 1]
      refute_nil line, report
      reproduced = run_command("sh", "-c", line, chdir: "/")
      assert_exit 77, reproduced
      assert_equal group[:name], Ruzzy::Findings::Identity.of_report(reproduced.stderr).group
    end
  end

  # A corpus directory that does not exist yet is a new corpus, as
  # libFuzzer's first corpus directory is: created, and the campaign's
  # corpus.
  def test_a_corpus_directory_that_does_not_exist_yet_is_created
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.getbyte(0) == 1 ? data.getbyte(1) == 2 : nil; nil })")
      result = ruzzy("--keep-going", "harness.rb", "-seed=1", "-runs=#{runs(3000)}", "corpus/new", chdir: dir)
      assert_exit 0, result
      assert_match(%r{corpus in corpus/new, log in}, result.stderr)
      refute_empty Dir.children(File.join(dir, "corpus", "new")), "the corpus grew in it"
      refute File.exist?(File.join(dir, "ruzzy-findings", "corpus")), "no corpus of the campaign's own"
      typo = ruzzy("--keep-going", "harness.rb", "-runs=10", "corpus/new", "seeds/tpyo", chdir: dir)
      assert_exit 2, typo
      assert_match(%r{no such corpus directory \S*seeds/tpyo}, typo.stderr, "only the first is created")
    end
  end

  # A worker that ends unasked says so (what it printed last), so a
  # campaign that ended early is never a mystery.
  def test_a_worker_that_ends_before_its_time_or_is_interrupted_is_said_to
    in_tmpdir do |dir|
      write_harness(dir,
                    'Ruzzy.fuzz(->(data) { exit!(0) if data == "Q"; Process.kill("INT", Process.pid) if data == "I" })')
      { "Q" => /ended with status 0 \d+ s before its time; it printed:/,
        "I" => /was interrupted \(SIGINT\); it printed:/ }.each do |input, note|
        corpus = File.join(dir, input)
        FileUtils.mkdir_p(corpus)
        File.write(File.join(corpus, "input"), input)
        result = ruzzy("--keep-going", "--workers=1", "--findings=#{input}-findings", "harness.rb", corpus,
                       "-max_total_time=60", chdir: dir)
        assert_match(/^ruzzy: worker 0 \(pid \d+\) #{note}/, result.stderr)
        assert_match(/^INFO: ruzzy: /, result.stderr[/it printed:\n.*/m], "the worker's own lines")
      end
    end
  end

  def test_keep_going_needs_corpus_directories_and_a_harness
    in_tmpdir do |dir|
      write_harness(dir, TWO_BUGS)
      File.write(File.join(dir, "input"), "x")
      assert_match(/--keep-going takes corpus directories, not input files/,
                   ruzzy("--keep-going", "harness.rb", "input", chdir: dir).tap { |r| assert_exit 2, r }.stderr)
      assert_match(/\Aruzzy findings: no findings directory nowhere$/,
                   ruzzy("findings", "nowhere", chdir: dir).tap { |r| assert_exit 2, r }.stderr)
    end
  end

  # A corpus input that crashes the worker while libFuzzer reads the corpus
  # would end every worker: it moves into its group, and the campaign goes
  # on to the next bug.
  def test_a_corpus_input_that_ends_every_worker_moves_into_its_group
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        Ruzzy.fuzz(lambda do |data|
          Faults.segv(data)
          raise IndexError, "after the crash" if data.start_with?("I")
          nil
        end)
      RUBY
      FileUtils.mkdir_p(File.join(dir, "corpus"))
      File.write(File.join(dir, "corpus", "segv"), "S")
      result = ruzzy("--keep-going", "harness.rb", "corpus", "-seed=1", "-max_total_time=20", chdir: dir)
      assert_corpus_input_set_aside(dir, "ruzzy-findings", File.join(dir, "corpus"), result)
    end
  end

  # A target that keeps state from one input to the next ends each worker
  # on another input of the corpus, after the one that broke it: the
  # campaign gives up saying that the inputs it moved may pass alone, as
  # they do, and how to tell.
  def test_workers_ended_by_state_an_earlier_input_left_say_so
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        $broken = false
        Ruzzy.fuzz(lambda do |data|
          $broken = true if data.start_with?("B")
          Faults.segv("S") if $broken && data.start_with?("C")
          nil
        end)
      RUBY
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "break"), "B")
      %w[C1 C2 C3 C4].each { |input| File.write(File.join(corpus, input), input) }
      result = ruzzy("--keep-going", "--workers=1", "harness.rb", "corpus", "-seed=1", "-max_total_time=30", chdir: dir)
      assert_exit 77, result
      assert_match(/^ruzzy: 3 workers in a row ended before fuzzing started, each on another input of the corpus, /,
                   result.stderr)
      assert_match(/If they pass alone \(ruzzy findings ruzzy-findings replay\), the target keeps state from one /,
                   result.stderr)
      assert_match(/^  \[passes alone\]: /, result.stderr, "the campaign ran the moved inputs alone")
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_match(/passes now, as it did alone in the campaign/, replay.stdout, "the moved inputs pass alone")
    end
  end

  # A target that keeps state from one input to the next fails on an input
  # only because of those before it. The campaign runs each group's input
  # alone, and says of the one that passes that it is no reproducer: at
  # once, in its summary, and in `ruzzy findings` list, show and replay.
  def test_a_group_whose_input_passes_alone_is_said_to
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        $calls = 0
        Ruzzy.fuzz(lambda do |data|
          raise IOError, "stale cache" if ($calls += 1) == 300
          raise KeyError, "bad key" if data.start_with?("K")
          nil
        end)
      RUBY
      result = ruzzy("--keep-going", "--workers=1", "harness.rb", "-seed=1", "-runs=#{runs(5000)}", chdir: dir)
      assert_exit 77, result
      groups = list_groups(dir).to_h { |group| [group[:title], group] }
      stale = groups.fetch("IOError: stale cache") { flunk result.stderr }
      assert_equal "passes", stale[:alone], result.stderr
      assert_equal "fails", groups.fetch("KeyError: bad key")[:alone], result.stderr
      assert_match(/^  #{stale[:name]}: its input passed when run by itself: it fails only after other inputs ran /,
                   result.stderr)
      assert_match(/IOError: stale cache \[passes alone\]$/, result.stderr)
      assert_match(/KeyError: bad key$/, result.stderr)
      assert_match(/^  \[passes alone\]: its input passed when run by itself/, result.stderr)

      assert_match(/IOError: stale cache \[passes alone\]\n.*^  \[passes alone\]: /m,
                   ruzzy("findings", chdir: dir).stdout)
      assert_match(/^Its input passed when run by itself: /, ruzzy("findings", "show", stale[:name], chdir: dir).stdout)
      replay = ruzzy("findings", "replay", chdir: dir)
      assert_match(/^ok +#{stale[:name]} +passes now, as it did alone in the campaign: /, replay.stdout)
      assert_empty artifacts(dir), "no crash file outside the findings directory"
    end
  end

  # The same for a fuzz test's corpus, which only its test file names (the
  # supervisor learns it from the worker).
  def test_a_fuzz_tests_corpus_input_that_ends_every_worker_moves_into_its_group
    in_tmpdir do |dir|
      build_plain_extension(dir)
      File.write(File.join(dir, "crash_fuzz_test.rb"), <<~RUBY)
        require "minitest/autorun"
        require "ruzzy/minitest"
        require_relative "faults"

        class CrashFuzzTest < Minitest::Test
          fuzz_test "reads records" do |data|
            Faults.segv(data)
            raise IndexError, "after the crash" if data.start_with?("I")
          end
        end
      RUBY
      corpus = File.join(dir, "fuzz", "reads_records")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "segv"), "S")
      result = ruzzy("--findings=found", "run-test", "crash_fuzz_test.rb", "reads records", "-seed=1",
                     "-max_total_time=20", chdir: dir)
      assert_corpus_input_set_aside(dir, "found", corpus, result)
    end
  end

  # A campaign whose directory is gone cannot be replayed as it ran: a
  # usage error that says where it ran, not a stack trace.
  def test_findings_of_a_campaign_whose_directory_is_gone_say_so
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { raise TypeError, 'always' })")
      assert_exit 77, ruzzy("--findings=found", "harness.rb", "-seed=1", "-runs=10", chdir: dir)
      settings = File.join(dir, "found", "campaign.json")
      File.write(settings, JSON.generate(JSON.parse(File.read(settings)).merge("directory" => "/nonexistent/ran-here")))
      group = list_groups(dir, "found").first[:name]
      %w[replay minimise].each do |verb|
        result = ruzzy("findings", "found", verb, group, chdir: dir)
        assert_exit 2, result
        assert_match(%r{\Aruzzy: the campaign ran in /nonexistent/ran-here, which no longer exists }, result.stderr)
        assert result.stderr.end_with?(")\nRun `ruzzy --help` for usage.\n"), result.stderr
      end
    end
  end

  private

  # The campaign of +result+ moved corpus/segv out of +corpus+ into its
  # group in +findings+ and went on to find the IndexError.
  def assert_corpus_input_set_aside(dir, findings, corpus, result)
    assert_exit 77, result
    assert_match(%r{moved \S*segv \(it ends every worker\) into \S+/}, result.stderr)
    refute File.exist?(File.join(corpus, "segv")), "out of the corpus"
    groups = list_groups(dir, findings)
    assert_includes groups.map { |group| group[:title] }, "IndexError: after the crash", result.stderr
    kept = Dir.glob(File.join(dir, findings, "*", "from-corpus-segv"))
    assert_equal 1, kept.size, "kept in its group"
    assert_equal "S", File.read(kept.first)
  end

  # A campaign on a harness that needs a library from a gem home on
  # GEM_PATH (with a planted bug) and files from load paths given to Ruby
  # and to ruzzy (-I, relative to +dir+); returns the gem home and the
  # GEM_PATH.
  def campaign_on_an_installed_library(dir)
    home = File.join(dir, "gems")
    install_gem(home, "planted", "lib/planted.rb" => <<~RUBY)
      module Planted
        def self.parse(data) = data.bytesize > 1 && data.getbyte(0) == 7 && raise(ArgumentError, "planted bug")
      end
    RUBY
    { "helpers" => "Helper", "vendor" => "Vendored" }.each do |subdir, name|
      FileUtils.mkdir_p(File.join(dir, subdir))
      File.write(File.join(dir, subdir, "#{name.downcase}.rb"), "module #{name}; def self.call(data) = data; end\n")
    end
    write_harness(dir, <<~RUBY)
      require "planted"
      require "helper"
      require "vendored"
      Ruzzy.fuzz(->(data) { Planted.parse(Vendored.call(Helper.call(data))); nil })
    RUBY
    gem_path = [home, *Gem.path].join(":")
    assert_exit 77, run_command(RbConfig.ruby, "-I", "helpers", ruzzy_program, "-I", "vendor", "--keep-going",
                                "harness.rb", "-seed=1", "-runs=#{runs(30_000)}", chdir: dir,
                                                                                  env: { "GEM_PATH" => gem_path })
    [home, gem_path]
  end

  # `ruzzy findings replay` and `minimise` of +group+ say that the harness
  # did not run, with their own exit status.
  def assert_harness_did_not_run(findings, group, chdir)
    broken = ruzzy("findings", findings, "replay", chdir:)
    assert_exit 1, broken
    assert_match(/^NOT RUN +#{group} +the harness did not run \(exit 1\):$/, broken.stdout)
    assert_match(/LoadError.*planted/, broken.stdout)
    refute_match(/fails differently|reproduced/, broken.stdout)
    assert_match(/ruzzy findings: the harness did not run, so the input of 1 group\(s\) was not tried/, broken.stderr)
    minimise = ruzzy("findings", findings, "minimise", group, chdir:)
    assert_exit 1, minimise
    assert_match(/the harness did not run, so #{group}'s input was not tried; it printed:\n.*LoadError/m,
                 minimise.stderr)
  end

  # The ruzzy command the tests run (exe/ruzzy of this checkout, or the
  # installed gem's), as a file Ruby can run.
  def ruzzy_program
    ENV.fetch("PATH").split(File::PATH_SEPARATOR).map { |path| File.join(path, "ruzzy") }.find do |file|
      File.file?(file) && File.executable?(file)
    end
  end
end

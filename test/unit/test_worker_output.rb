# frozen_string_literal: true

require_relative "../test_helper"
require "stringio"
require "ruzzy/campaign/worker_output"

# What a campaign's supervisor reads from a worker: the executions, coverage
# and corpus size of either engine's progress lines, the exact count the
# worker prints when it ends, whether the engine read the corpus, and the
# report of the finding that ended it.
class TestWorkerOutput < Minitest::Test
  WorkerOutput = Ruzzy::Campaign::WorkerOutput

  LIBFUZZER = <<~TEXT
    INFO: Seed: 1
    #2\tINITED cov: 3 ft: 3 corp: 1/1b exec/s: 0 rss: 30Mb
    #1024\tNEW    cov: 5 ft: 7 corp: 2/3b lim: 4 exec/s: 512 rss: 31Mb L: 2/2 MS: 1 ChangeBit-
    #2048\tpulse  cov: 5 ft: 7 corp: 2/3b lim: 4 exec/s: 1024 rss: 31Mb
  TEXT

  # LibAFL's runtime: its monitor's totals line and client line at every
  # event, its user statistics in no fixed order.
  LIBAFL = <<~TEXT
    INFO: ruzzy: using LibAFL's libFuzzer-compatible engine in /gems/ruzzy/lib/ruzzy/libafl_libfuzzer.so
    We imported 0 inputs from disk.
    [UserStats   #0]  (GLOBAL) run time: 0s, clients: 1, corpus: 0, objectives: 0, executions: 1, exec/sec: 0.000, edges: 0.146%
          (CLIENT) corpus: 0, objectives: 0, executions: 1, exec/sec: 0.000, edges: 3/2048 (0%)
    We imported 1 inputs from the generator.
    [Testcase    #0]  (GLOBAL) run time: 0s, clients: 1, corpus: 2, objectives: 0, executions: 3397, exec/sec: 0.000, size_edges: 0.586%, edges: 0.586%
           (CLIENT) corpus: 2, objectives: 0, executions: 3397, exec/sec: 0.000, size_edges: 12/2048 (0%), edges_stability: 9/9 (100%), edges: 12/2048 (0%)
    [Client Heartbeat #0]  (GLOBAL) run time: 15s, clients: 1, corpus: 2, objectives: 0, executions: 1033862, exec/sec: 68.76k
         (CLIENT) corpus: 2, objectives: 0, executions: 1033862, exec/sec: 68.76k
  TEXT

  def read(text)
    log = StringIO.new
    output = WorkerOutput.new(log)
    groups = []
    text.each_line.each_slice(3) { |lines| output.feed(lines.join) { |group| groups << group } }
    output.finish { |group| groups << group }
    assert_equal text, log.string, "every line in the campaign log"
    [output, groups]
  end

  def test_libfuzzer_progress
    output, = read(LIBFUZZER)
    assert_equal [2048, 5, 2], output.progress.to_a
    assert_predicate output, :initialised?
  end

  def test_libafl_progress
    output, = read(LIBAFL)
    assert_equal [1_033_862, 12, 2], output.progress.to_a, "a line without the edges keeps the last coverage"
    assert_predicate output, :initialised?
    assert_empty output.report, "LibAFL's status lines are no report"
  end

  def test_not_initialised_before_the_engine_read_the_corpus
    [LIBFUZZER, LIBAFL].each do |text|
      output, = read(text.lines.first)
      refute_predicate output, :initialised?
      assert_nil output.progress
    end
  end

  # The count printed at the end is exact, where the last progress line
  # may be 15 s old; the report is what came after the last progress line.
  def test_the_final_count_and_the_report_of_a_finding
    ending = <<~TEXT
      ==4410== ERROR: libFuzzer: deadly signal
      DEDUP_TOKEN: <top>@harness.rb
      ==ruzzy== Test unit written to ./crash-ad211d9480cf1780fbd131d785c837b5c27def96
      SUMMARY: libFuzzer: deadly signal
      stat::number_of_executed_units: 1234567
      stat::average_exec_per_sec:     70591
    TEXT
    [LIBFUZZER, LIBAFL].each do |text|
      output, = read(text + ending)
      assert_equal 1_234_567, output.progress.executions
      assert_operator output.progress.coverage, :>, 0
      assert_equal ending, output.report
    end
  end

  def test_a_final_count_alone_leaves_coverage_and_corpus_unknown
    output, = read("Done 5 runs in 0 second(s)\nstat::number_of_executed_units: 5\n")
    assert_equal [5, nil, nil], output.progress.to_a
  end

  def test_announced_groups_and_reached_lines
    output, groups = read("#{Ruzzy::Campaign.reached_line(7, 10, 9, 1234)}" \
                          "==ruzzy== new finding group exception-df900f6685 (exception): TypeError: bad header\n")
    assert_equal [7, 10, 9], output.reached
    assert_equal [["exception-df900f6685", "exception", "TypeError: bad header"]], groups
  end

  # A fuzz test's worker names the corpus its test chose (the supervisor
  # shares it and sets aside an input in it that ends every worker); the
  # line is not part of a report.
  def test_the_corpus_a_fuzz_tests_worker_announced
    output, = read("#{Ruzzy::Campaign.corpus_line("/project/test/fuzz/parses any record")}" \
                   "==1== ERROR: libFuzzer: deadly signal\n")
    assert_equal "/project/test/fuzz/parses any record", output.corpus_dir
    assert_equal "==1== ERROR: libFuzzer: deadly signal\n", output.report
    assert_nil read(LIBFUZZER).first.corpus_dir, "a harness's worker names none"
  end

  # `ruzzy rack`'s worker says what routes it found; the supervisor shows
  # the line once (a campaign shows no worker's INFO lines).
  def test_what_the_target_said_when_it_started
    info = "ruzzy rack: 2 routes: POST /notes/:id, GET /hello\nsecond line"
    output, = read("#{Ruzzy::Campaign.target_line(info)}#{LIBFUZZER}")
    assert_equal "ruzzy rack: 2 routes: POST /notes/:id, GET /hello", output.target
    assert_nil read(LIBFUZZER).first.target
  end

  # A worker's note for the user (a note_line) is kept for the supervisor
  # to show; notes of one kind are one kind whatever file they name.
  def test_a_workers_notes_are_kept_by_kind
    note = "code loaded while fuzzing (/x/big.rb and before it) brings ... --map-size=8192"
    output, = read("#{LIBFUZZER}#{Ruzzy::Campaign.note_line(note)}")
    assert_equal [note], output.notes
    assert_equal Ruzzy::Campaign.note_kind(note), Ruzzy::Campaign.note_kind(note.sub("/x/big", "/y/other"))
    assert_empty read(LIBFUZZER).first.notes
  end

  # libFuzzer prints a progress line only for new coverage and at powers of
  # two: a target that finds nothing new (every input raises) would show
  # no executions for minutes. The worker's own count fills the gap.
  def test_the_workers_own_count_updates_a_stale_progress_line
    progress = "#4096\tpulse  cov: 12 ft: 14 corp: 3/9b lim: 4 exec/s: 2048 rss: 50Mb\n"
    output, = read(progress + Ruzzy::Campaign.reached_line(1, 1, 9, 6000))
    assert_equal [6000, 12, 3], output.progress.to_a
    output, = read(Ruzzy::Campaign.reached_line(1, 1, 9, 10) + progress)
    assert_equal [4096, 12, 3], output.progress.to_a, "a newer progress line wins"
    output, = read(progress + Ruzzy::Campaign.reached_line(1, 1, 9, 4000))
    assert_equal 4096, output.progress.executions, "a count never goes down"
  end

  # The worker's artifacts directory is deleted once its artifacts are
  # filed: the log names a slow input where the campaign keeps it, and
  # holds the lines from the first naming another artifact until the
  # supervisor filed it and says what they become.
  def test_the_log_never_names_the_workers_artifacts_directory
    log = StringIO.new
    output = WorkerOutput.new(log, artifacts: "/f/.artifacts/3", slow_units: "/f/slow-units")
    no_group = proc { flunk "no group is announced" }
    output.feed("#{LIBFUZZER}==1== ruzzy: slow input: 0.3 s; written to /f/.artifacts/3/slow-unit-0a\n" \
                "artifact_prefix='/f/.artifacts/3/'; Test unit written to /f/.artifacts/3/slow-unit-0b\n", &no_group)
    output.feed("#4096\tpulse  cov: 5 ft: 7 corp: 2/3b lim: 4 exec/s: 1024 rss: 31Mb\n", &no_group)
    assert_equal "#{LIBFUZZER}==1== ruzzy: slow input: 0.3 s; written to /f/slow-units/slow-unit-0a\n" \
                 "artifact_prefix='/f/slow-units/'; Test unit written to /f/slow-units/slow-unit-0b\n" \
                 "#4096\tpulse  cov: 5 ft: 7 corp: 2/3b lim: 4 exec/s: 1024 rss: 31Mb\n", log.string

    headline = "==1== ERROR: libFuzzer: deadly signal\n"
    held = "artifact_prefix='/f/.artifacts/3/'; Test unit written to /f/.artifacts/3/crash-0c\n" \
           "stat::number_of_executed_units: 5000\n"
    written = log.string + headline
    output.feed(headline + held, &no_group)
    output.finish(&no_group)
    output.log("<== worker 3: pid 7 ended with status 77 after 5000 executions\n")
    assert_equal written, log.string, "the lines from the first naming the artifact wait for it to be filed"
    filing = ->(text) { text.gsub("/f/.artifacts/3/crash-0c", "/f/g/input").gsub("/f/.artifacts/3/", "/f/g/") }
    output.release(&filing)
    assert_equal "#{written}#{filing.call(held)}<== worker 3: pid 7 ended with status 77 after 5000 executions\n",
                 log.string
    assert_equal filing.call(headline + held), output.report, "the report as filed (shown when workers keep failing)"
  end
end

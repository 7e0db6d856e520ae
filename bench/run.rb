# frozen_string_literal: true

# Prints ruzzy's benchmark table (Markdown). Run with `rake bench`, or
# `ruby bench/run.rb SECTION...` for some sections only.
#
# Environment: BENCH_SECONDS (per stdlib parser, default 10),
# BENCH_CORPUS_SECONDS (the run that builds each parser's corpus, default 60),
# BENCH_SEEDS (seeds for solve times, default "1,2,3"),
# BENCH_SAFE_SECONDS (each safe detector example, default 60),
# BENCH_FINDING_SECONDS (the workers section's campaigns on the planted-bug
# target, default 60), BENCH_WORKER_SECONDS (each of the workers section's
# parser campaigns, default 30), BENCH_WORKER_ROUNDS (its rounds per
# parser, default 3),
# BENCH_SOURCES (where the c_extensions section keeps the gems' source
# tarballs, downloaded from the Debian mirror `bin/rubies mirror` names;
# default /var/cache/ruzzy/bench-sources), BENCH_GEMS (the c_extensions
# section's gems, by name prefix, comma-separated; default all),
# BENCH_RUZZY_0_8_HOME (a gem home
# with Trail of Bits' Ruzzy 0.8, for the comparison columns of the
# fixed_documents and c_extensions sections).
#
# Every number comes from this run on this machine; compare ratios, not
# absolute values, between machines.

require "etc"
require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"

# The benchmark sections, one method per table.
module Bench
  DIR = __dir__
  EXAMPLES = File.expand_path("../examples", DIR)
  SECONDS = Integer(ENV.fetch("BENCH_SECONDS", "10"))
  SEEDS = ENV.fetch("BENCH_SEEDS", "1,2,3").split(",").map(&:strip)
  SAFE_SECONDS = Integer(ENV.fetch("BENCH_SAFE_SECONDS", "60"))
  # Ruzzy 0.8's gem home, for its columns: `gem install ruzzy -v 0.8.0
  # --install-dir DIR` with the environment its README gives
  # (MAKE="make --environment-overrides" CC=clang CXX=clang++
  # LDSHARED="clang -shared" LDSHAREDXX="clang++ -shared"); with
  # no gem server, from a checkout of its tag v0.8.0: `gem build
  # ruzzy.gemspec`, then `gem install --local --ignore-dependencies
  # --install-dir DIR ruzzy-0.8.0.gem` with that environment.
  RUZZY_0_8_HOME = ENV.fetch("BENCH_RUZZY_0_8_HOME", nil)

  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Runs a command in a fresh temporary directory; returns [output, seconds, status].
  def run(*command, env: {})
    Dir.mktmpdir("ruzzy-bench") do |dir|
      started = now
      output, status = Open3.capture2e(env, *command, chdir: dir)
      [output, now - started, status]
    end
  end

  def ruby(*args)
    run(RbConfig.ruby, *args)
  end

  def ruzzy(*args, env: {})
    run("ruzzy", *args, env:)
  end

  def median(values)
    sorted = values.sort
    sorted[sorted.size / 2]
  end

  def fmt(number, digits = 0)
    return "-" if number.nil?

    whole, fraction = format("%.#{digits}f", number).split(".")
    whole = whole.reverse.scan(/\d{1,3}/).join(",").reverse.then { |w| number.negative? ? "-#{w}" : w }
    fraction ? "#{whole}.#{fraction}" : whole
  end

  def table(title, header, rows)
    puts "\n### #{title}\n\n"
    puts "| #{header.join(" | ")} |"
    puts "|#{header.map { "---" }.join("|")}|"
    rows.each { |row| puts "| #{row.join(" | ")} |" }
  end

  # Per-input overhead of the libFuzzer bridge on a trivial target, with
  # no coverage map and with maps of several sizes (libFuzzer clears and
  # scans the whole map after every input; by default the map is fitted to
  # the code, 2,048 counters for this one).
  def bridge
    runs = 1_000_000
    trivial = File.join(DIR, "trivial.rb")
    loop_output, = ruby(trivial, "--loop", runs.to_s)
    loop_ns = Float(loop_output.lines.last) * 1e9 / runs
    rows = [["bare Ruby loop, fresh Strings", fmt(1e9 / loop_ns), fmt(loop_ns), "-"]]
    [["--no-coverage"], ["--map-size=2048", "(smallest fitted map)"], ["--map-size=16384"],
     ["--map-size=65536", "(largest fitted map)"]].each do |flag, note|
      _, startup, = ruzzy(flag, trivial, "-runs=1")
      _, total, = ruzzy(flag, trivial, "-runs=#{runs}")
      ns = (total - startup) * 1e9 / (runs - 1)
      rows << ["ruzzy #{flag} #{note}".strip, fmt(1e9 / ns), fmt(ns), fmt(ns - loop_ns)]
    end
    table("Bridge: trivial target `->(data) { 0 }`, #{fmt(runs)} inputs",
          ["what", "execs/s", "ns/input", "overhead ns/input"], rows)
  end

  # Cost of coverage per call of two small targets, and per unit of work:
  # per line and branch event Ruby's own Coverage counts (a loop), and per
  # `if` (100 of them).
  def events
    script = File.join(DIR, "events.rb")
    iterations = 200_000
    rows = [["hundred_events", "25-iteration loop", nil], ["hundred_ifs", "100 `if`s", 100]].map do |name, label, ifs|
      count = Integer(ruby(script, "count", name).first.lines.last)
      times = %w[untraced traced builtin].to_h do |mode|
        [mode, median(Array.new(3) { Float(ruby(script, mode, iterations.to_s, name).first.lines.last) })]
      end
      units = ifs || count
      per_unit = ->(mode) { (times[mode] - times["untraced"]) / units }
      ["#{label} (#{count} events with Ruby's line counting)", fmt(times["untraced"]), fmt(times["traced"]),
       "#{fmt(per_unit.call("traced"), 1)} per #{ifs ? "if" : "event"}", fmt(times["builtin"]),
       fmt(per_unit.call("builtin"), 1)]
    end
    table("Coverage: ns per call (median of 3), and over untraced per event or per `if`",
          ["target", "untraced", "ruzzy", "ruzzy, over untraced", "Ruby's Coverage (lines, branches)",
           "Ruby's Coverage, over untraced"], rows)
  end

  # Cost of one hooked comparison.
  def compare_cost
    script = File.join(DIR, "compare_cost.rb")
    costs = %w[plain hooked].to_h do |mode|
      runs = Array.new(3) { ruby(script, mode).first.lines.last.split.map { |v| Float(v) } }
      [mode, runs.transpose.map { |values| median(values) }]
    end
    rows = [["Integer `a == b`", 0], ["String `s == t` (14 bytes)", 1], ["Regexp `match?` that matches", 2],
            ["Regexp `match?` that fails (the same failure each time)", 3]].map do |label, i|
      [label, fmt(costs["plain"][i], 1), fmt(costs["hooked"][i], 1)]
    end
    table("Comparison hooks: ns per comparison outside libFuzzer (median of 3)",
          ["comparison", "plain Ruby", "hooked"], rows)
  end

  PARSERS = ENV.fetch("BENCH_PARSERS", "uri,csv,ipaddr,time,rexml,psych").split(",").freeze
  CORPUS_SECONDS = Integer(ENV.fetch("BENCH_CORPUS_SECONDS", "60"))
  WORK = Dir.mktmpdir("ruzzy-bench-corpora")
  at_exit { FileUtils.rm_rf(WORK) }

  def target(name)
    File.join(DIR, "targets", "#{name}.rb")
  end

  # The comparison feedback of the previous release: Integer, String,
  # Symbol and Hash comparisons only (no Regexp, Float or conversion
  # feedback, no dictionary from the program's literals).
  EARLIER_FEEDBACK = { flags: ["--no-literal-dict"],
                       env: { "RUZZY_COMPARE_HOOKS" => "integer,string,symbol,hash" } }.freeze
  DEFAULT_FEEDBACK = { flags: [], env: {} }.freeze

  # One fuzzing run of a standard-library parser target with ruzzy's
  # +flags+, from the +corpus+ directories (the first one receives new
  # inputs); returns [execs/s, last status line, output, execs].
  def fuzz_parser(name, *flags, corpus: [], seconds: SECONDS, env: {})
    output, elapsed, = ruzzy(*flags, target(name), *corpus, "-seed=1", "-max_total_time=#{seconds}", env:)
    execs = output[/stat::number_of_executed_units: (\d+)/, 1].to_i
    [execs.fdiv([elapsed, seconds].min), output.lines.grep(/\A#\d+\s/).last.to_s, output, execs]
  end

  # The corpus one run of CORPUS_SECONDS builds for +name+ with the given
  # +feedback+ (made once per bench run); its directory, the run's execs/s
  # and the finding that stopped it.
  def corpus(name, feedback = DEFAULT_FEEDBACK)
    @corpora ||= {}
    @corpora[[name, feedback]] ||= begin
      dir = File.join(WORK, "#{name}-#{@corpora.size}")
      FileUtils.mkdir_p(dir)
      speed, _, output, execs = fuzz_parser(name, *feedback[:flags], corpus: [dir], seconds: CORPUS_SECONDS,
                                                                     env: feedback[:env])
      finding = output[/uncaught Ruby exception in the fuzz target\n(\S+):/, 1] ||
                output[/bug detector (\w+) fired/, 1]&.then { |detector| "detector #{detector}" }
      [dir, speed, finding && "#{finding} after #{fmt(execs)} execs"]
    end
  end

  # What coverage costs on real parsers: exec/s with everything on, without
  # comparison hooks, and with neither (the target's own speed under
  # libFuzzer), each run starting from the same saved corpus so that all
  # three run inputs of the same kind; the last column is untraced / default.
  def overhead
    configurations = [[], ["--no-compare-hooks"], ["--no-coverage", "--no-compare-hooks"]]
    rows = PARSERS.map do |name|
      seeds, = corpus(name)
      speeds = configurations.map do |flags|
        Dir.mktmpdir("ruzzy-bench-new") { |fresh| fuzz_parser(name, *flags, corpus: [fresh, seeds]).first }
      end
      [name, *speeds.map { |speed| fmt(speed) }, "#{fmt(speeds.last / speeds.first, 2)}x"]
    end
    table("Coverage overhead on standard-library parsers: execs/s, #{SECONDS} s each from the " \
          "#{CORPUS_SECONDS} s corpus, -seed=1",
          ["target", "default", "--no-compare-hooks", "--no-coverage --no-compare-hooks", "untraced / default"],
          rows)
  end

  # Microseconds per input when ruzzy replays +files+ (each +times+ times,
  # libFuzzer's individual-input mode) with +flags+; start-up subtracted.
  def replay_us(name, flags, files, times)
    _, startup, = ruzzy(*flags, target(name), "-runs=1", *files)
    _, total, = ruzzy(*flags, target(name), "-runs=#{times + 1}", *files)
    (total - startup) * 1e6 / (times * files.size)
  end

  # The same cost on fixed inputs: each parser's saved corpus replayed in
  # each configuration, so that all three run exactly the same inputs
  # (about 3 s of replay each; no mutation, corpus or feature work).
  def overhead_fixed
    configurations = [[], ["--no-compare-hooks"], ["--no-coverage", "--no-compare-hooks"]]
    rows = PARSERS.map do |name|
      dir, speed, = corpus(name)
      files = Dir.children(dir).sort.map { |file| File.join(dir, file) }
      times = [(3 * speed / files.size).ceil, 1].max
      costs = configurations.map { |flags| replay_us(name, flags, files, times) }
      [name, fmt(files.size), *costs.map { |cost| fmt(cost, 1) }, "#{fmt(costs.first / costs.last, 2)}x"]
    end
    table("Coverage overhead on fixed inputs: µs per input, the #{CORPUS_SECONDS} s corpus replayed",
          ["target", "inputs", "default", "--no-compare-hooks", "--no-coverage --no-compare-hooks",
           "default / untraced"], rows)
  end

  FIXED_DOCUMENTS = File.join(DIR, "fixed_documents")
  FIXED_CONFIGURATIONS = { "ruzzy" => [], "--no-compare-hooks" => ["--no-compare-hooks"],
                           "untraced" => ["--no-coverage", "--no-compare-hooks"] }.freeze

  # Per execution on the same work for everyone: each parser parses one
  # fixed document per execution (bench/fixed_documents/harness.rb), under
  # ruzzy's defaults, without comparison hooks, untraced, and under Ruzzy
  # 0.8 (tracer.rb, no preload) when BENCH_RUZZY_0_8_HOME names its gem
  # home; beside them what Ruby's own branch coverage costs the same work
  # without a fuzzer; then the cost of a traced `if` inside the fuzzing loop.
  def fixed_documents
    rows = PARSERS.map do |name|
      speeds = FIXED_CONFIGURATIONS.transform_values { |flags| fixed_speed(name, flags) }
      row = [name, *speeds.values.map { |speed| fmt(speed) }, "#{fmt(speeds["untraced"] / speeds["ruzzy"], 2)}x",
             "#{fmt(ruby_coverage_cost(name), 2)}x"]
      next row unless RUZZY_0_8_HOME

      old = fixed_speed(name, nil)
      row + [fmt(old), "#{fmt(speeds["ruzzy"] / old, 2)}x"]
    end
    header = ["parser", *FIXED_CONFIGURATIONS.keys.map { |label| "#{label} execs/s" }, "untraced / ruzzy",
              "Ruby's branch coverage alone"]
    header += ["Ruzzy 0.8 execs/s", "ruzzy / Ruzzy 0.8"] if RUZZY_0_8_HOME
    table("Per execution on a fixed document (bench/fixed_documents): average execs/s, #{SECONDS} s each, " \
          "one process at a time", header, rows)
    traced_if
  end

  # What Ruby's own branch coverage costs the workload of +name+ with no
  # fuzzer (bench/fixed_documents/ruby_coverage.rb): µs per execution with
  # it over µs without, the floor under coverage from the interpreter's
  # events.
  def ruby_coverage_cost(name)
    with, without = %w[branches none].map { |mode| plain_loop_us(name, mode) }
    with / without
  end

  # µs per execution of +name+'s fixed document in a plain loop with no
  # fuzzer (bench/fixed_documents/ruby_coverage.rb), with Ruby's branch
  # coverage ("branches") or none, given +ruby_options+ ("--yjit").
  def plain_loop_us(name, mode, *ruby_options)
    script = File.join(FIXED_DOCUMENTS, "ruby_coverage.rb")
    output, = ruby(*ruby_options, script, name, mode, SECONDS.to_s)
    Float(output[/us_per_call: ([\d.]+)/, 1] ||
          raise("no timing from #{script} #{name} #{mode} #{ruby_options.join(" ")}:\n#{output}"))
  end

  # Average execs/s of the fixed-document harness for +name+ under ruzzy
  # with +flags+, or under Ruzzy 0.8 when +flags+ is nil.
  def fixed_speed(name, flags, extra = ["-max_total_time=#{SECONDS}"], env: {})
    output, = fixed_run(name, flags, [*extra, "-seed=1", "-print_final_stats=1"], env:)
    speed = output[/stat::average_exec_per_sec:\s+(\d+)/, 1]
    raise "no execs/s from #{name} #{flags.inspect}:\n#{output.lines.last(20).join}" unless speed

    Float(speed)
  end

  # [output, seconds] of one run of the fixed-document harness: ruzzy with
  # +flags+, or Ruzzy 0.8 through tracer.rb (nil), or Ruzzy 0.8 without
  # tracing (:untraced).
  # +tool+ runs the command under another program (valgrind).
  def fixed_run(name, flags, args, tool: [], env: {})
    env = env.merge("BENCH_PARSER" => name)
    harness = File.join(FIXED_DOCUMENTS, "harness.rb")
    output, seconds, = case flags
                       when nil then run(*tool, RbConfig.ruby, File.join(FIXED_DOCUMENTS, "tracer.rb"), *args,
                                         env: env.merge(ruzzy_0_8_env))
                       when :untraced then run(*tool, RbConfig.ruby, harness, *args, env: env.merge(ruzzy_0_8_env))
                       else run(*tool, "ruzzy", *flags, harness, *args, env:)
                       end
    [output, seconds]
  end

  # The environment that loads Ruzzy 0.8 from RUZZY_0_8_HOME: that gem home
  # first, then every gem directory that holds no other ruzzy (so the
  # standard library's bundled gems still load).
  def ruzzy_0_8_env
    others = Gem.path.reject { |dir| Dir.glob(File.join(dir, "gems", "ruzzy-*")).any? }
    { "GEM_HOME" => RUZZY_0_8_HOME, "GEM_PATH" => [RUZZY_0_8_HOME, *others].join(File::PATH_SEPARATOR) }
  end

  IF_RUNS = [20_000, 120_000].freeze
  # --trace-children: `ruzzy` is a script whose `#!/usr/bin/env ruby` line
  # execs Ruby, which callgrind must follow to count anything.
  CALLGRIND = %w[valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes].freeze

  # ns per traced `if` inside the fuzzing loop: bench/targets/hundred_ifs.rb
  # (100 `if`s per input) run for two numbers of inputs, traced and
  # untraced; the difference of the differences over 100 `if`s per input.
  def traced_if
    span = ->(flags) { IF_RUNS.map { |runs| fixed_run("hundred_ifs", flags, ["-runs=#{runs}", "-seed=1"]).last } }
    per_if = lambda do |traced, untraced|
      t = span.call(traced)
      u = span.call(untraced)
      ((t.last - t.first) - (u.last - u.first)) * 1e9 / (IF_RUNS.last - IF_RUNS.first) / 100
    end
    rows = [["ruzzy", fmt(per_if.call([], FIXED_CONFIGURATIONS["untraced"]), 1)]]
    rows << ["Ruzzy 0.8", fmt(per_if.call(nil, :untraced), 1)] if RUZZY_0_8_HOME
    table("Coverage inside the fuzzing loop: ns per traced `if` (bench/targets/hundred_ifs.rb, " \
          "#{IF_RUNS.join(" and ")} inputs, traced minus untraced)", %w[fuzzer ns], rows)
  end

  # What a run of CORPUS_SECONDS reaches, measured by replaying its corpus
  # under Ruby's own Coverage (`ruzzy cov`, every loaded file), with the
  # default feedback and with the previous release's (EARLIER_FEEDBACK). A
  # run that finds a bug stops there (last column).
  def reached
    rows = PARSERS.flat_map do |name|
      [["all", DEFAULT_FEEDBACK], ["comparisons only", EARLIER_FEEDBACK]].map do |label, feedback|
        dir, speed, finding = corpus(name, feedback)
        lines, branches = replayed_coverage(name, dir)
        [name, label, fmt(speed), Dir.children(dir).size.to_s, lines, branches, finding || "-"]
      end
    end
    table("Coverage reached in #{CORPUS_SECONDS} s from an empty corpus (-seed=1), replayed with `ruzzy cov`; " \
          "feedback: all (default) or comparisons only (no Regexp, Float, conversion or literal dictionary)",
          ["target", "feedback", "execs/s", "corpus", "lines", "branches", "stopped by"], rows)
  end

  # exec/s and final coverage on standard-library parsers, comparison hooks
  # on (the default) and off. A run that finds a bug stops there; the
  # finding column names the exception.
  def parsers
    rows = PARSERS.flat_map do |name|
      [[], ["--no-compare-hooks"]].map do |flags|
        speed, status, output, execs = fuzz_parser(name, *flags)
        finding = output[/uncaught Ruby exception in the fuzz target\n(\S+):/, 1]
        [name, flags.empty? ? "on" : "off", fmt(speed), status[/cov: (\d+)/, 1] || "-",
         status[/ft: (\d+)/, 1] || "-", status[/corp: (\d+)/, 1] || "-",
         finding ? "#{finding} after #{fmt(execs)} execs" : "-"]
      end
    end
    table("Standard-library parsers, #{SECONDS} s each, -seed=1",
          ["target", "compare hooks", "execs/s", "cov", "ft", "corpus", "finding"], rows)
  end

  # What keeping going costs: exec/s of a plain run (which stops at its
  # first finding) and of `ruzzy --keep-going` (a supervisor reading the
  # worker's output, findings recorded in-process), each from the same
  # saved corpus.
  def campaign
    rows = PARSERS.map do |name|
      seeds, = corpus(name)
      plain, = Dir.mktmpdir("ruzzy-bench-new") { |fresh| fuzz_parser(name, corpus: [fresh, seeds]) }
      output, elapsed, = Dir.mktmpdir("ruzzy-bench-new") do |fresh|
        ruzzy("--keep-going", target(name), fresh, seeds, "-seed=1", "-max_total_time=#{SECONDS}")
      end
      execs = output[/ruzzy: campaign: (\d+) executions/, 1].to_i
      groups = output[/(\d+) finding\(s\) in (\d+) group/, 2] || "0"
      kept = execs.fdiv([elapsed, SECONDS].min)
      [name, fmt(plain), fmt(kept), "#{fmt(kept / plain, 2)}x", groups]
    end
    table("Keep going: execs/s, #{SECONDS} s each from the #{CORPUS_SECONDS} s corpus, -seed=1 " \
          "(a plain run stops at its first finding)",
          ["target", "plain", "--keep-going", "keep-going / plain", "groups found"], rows)
  end

  # Worker counts the workers section compares.
  WORKER_COUNTS = [1, 2].freeze
  # Seconds of each campaign on the planted-bug target.
  FINDING_SECONDS = Integer(ENV.fetch("BENCH_FINDING_SECONDS", "60"))
  # The planted-bug campaign target (docs/campaigns.md), shared with the
  # campaign search test.
  PLANTED = File.expand_path("../test/fixtures/campaign/three_bugs.rb", DIR)
  SOLVE_ROW = "two-stage integer checksum"

  # Seconds of each campaign of the workers section's parser rows: longer
  # than SECONDS, so that start-up (loading the parser, reading the
  # corpus) weighs less beside the minutes a campaign runs.
  WORKER_SECONDS = Integer(ENV.fetch("BENCH_WORKER_SECONDS", "30"))
  # Rounds of the workers section's parser rows (BENCH_WORKER_ROUNDS):
  # this machine's share of its cores moves from minute to minute, so each
  # round runs 1 worker, 2 workers and the two-campaign reference one
  # after another, and the rows add the rounds up.
  WORKER_ROUNDS = Integer(ENV.fetch("BENCH_WORKER_ROUNDS", "3"))

  # A campaign's numbers with 1 and with 2 workers (`--workers=N`,
  # -seed=1): execs/s, the coverage reached (libFuzzer's count, the
  # progress log's last row), the corpus at the end and whether the
  # closing line's count is the sum of the workers' own; beside them, what
  # two separate 1-worker campaigns at once (seeds 1 and 2, corpora of
  # their own) execute against one alone: the most two processes get from
  # this machine at that time, the ceiling of the 2 / 1 column. Each
  # parser starts twice: from an empty corpus, where 2 workers get further
  # in the same time and so run larger inputs, and from the corpus one run
  # of CORPUS_SECONDS built, where both run inputs of the same kind. Then
  # the seconds to each finding of the planted-bug target and of one solve
  # row.
  def workers
    rows = PARSERS.flat_map do |name|
      seeds, = corpus(name)
      { "empty" => nil, "#{CORPUS_SECONDS} s corpus" => seeds }.map do |start, dir|
        [name, start, *worker_cells(*worker_rounds(target(name), dir))]
      end
    end
    planted = planted_runs
    solve = seeded_runs(SOLVES.fetch(SOLVE_ROW))
    seeded = "seeds #{SEEDS.join(", ")}"
    rows << ["planted bugs (three.rb)", "empty, #{FINDING_SECONDS} s, #{seeded}", *worker_cells(planted)]
    rows << [SOLVE_ROW, "empty, #{seeded}", *worker_cells(solve)]
    counts = WORKER_COUNTS
    table("Workers: a campaign with 1 and 2 workers, parsers #{WORKER_SECONDS} s each, the mean of " \
          "#{WORKER_ROUNDS} rounds (-seed=1, 3, 5...) (#{Etc.nprocessors} cores; load average " \
          "#{File.read("/proc/loadavg").split.first} at the end)",
          ["target", "start", *counts.map { |count| "execs/s, #{count}" }, "2 / 1", "two separate campaigns / 1",
           *counts.map { |count| "cov, #{count}" }, *counts.map { |count| "corpus, #{count}" },
           "summary = sum of workers"], rows)
    table("Workers: seconds from the start to each finding (its NEW line; start-up included; the median of " \
          "#{seeded})",
          ["target", "finding", *counts.map { |count| "#{count} worker(s)" }],
          finding_rows("planted bugs" => planted, SOLVE_ROW => solve))
  end

  def planted_runs
    Dir.mktmpdir("ruzzy-bench-planted") do |work|
      FileUtils.cp(PLANTED, File.join(work, "three.rb"))
      build_faults(work)
      seeded_runs(File.join(work, "three.rb"), "--sanitizer=address", seconds: FINDING_SECONDS, flags: ["-timeout=2"])
    end
  end

  # A campaign of +harness+ per seed of SEEDS with each worker count (the
  # time to a finding and, on a target that hangs or crashes, the
  # executions between findings vary from run to run): the mean rate and
  # the median time to each finding (never found counts as infinite).
  def seeded_runs(harness, *options, **kwargs)
    WORKER_COUNTS.map do |count|
      runs = SEEDS.map { |seed| workers_run(harness, count, *options, seed: Integer(seed), **kwargs) }
      titles = runs.flat_map { |run| run[:found].keys }.uniq
      together(runs).merge(found: titles.to_h do |title|
        [title, median(runs.map { |run| run[:found].fetch(title, Float::INFINITY) })]
      end)
    end
  end

  # Runs of one worker count as one: their mean rate, whether every one's
  # summary was the sum of its workers', and the last one's other numbers.
  def together(runs)
    runs.last.merge(rate: runs.sum { |run| run[:rate] } / runs.size, counted: runs.all? { |run| run[:counted] })
  end

  # A row per finding of each target ({label => runs}): the seconds to it
  # with each worker count.
  def finding_rows(targets)
    targets.flat_map do |label, runs|
      runs.flat_map { |run| run[:found].keys }.uniq.sort.map do |title|
        [label, title, *runs.map { |run| run[:found][title]&.finite? ? fmt(run[:found][title], 1) : "not found" }]
      end
    end
  end

  # WORKER_ROUNDS rounds of +harness+ (from +seeds+, a corpus directory, or
  # from nothing) with each worker count and with two separate campaigns
  # at once: the runs of each count together (the mean rate, the last
  # round's coverage and corpus), and the separate pairs' mean rate. Round
  # r runs -seed=1+2r (worker k: +k; the separate campaigns: that seed and
  # the next), so that the rounds are different runs, not one run timed
  # three times.
  def worker_rounds(harness, seeds)
    rounds = Array.new(WORKER_ROUNDS) do |round|
      seed = 1 + (2 * round)
      [WORKER_COUNTS.map { |count| workers_run(harness, count, seconds: WORKER_SECONDS, seed:, seeds:) },
       [seed, seed + 1].map { |one| Thread.new { workers_run(harness, 1, seconds: WORKER_SECONDS, seed: one, seeds:) } }
                       .sum { |thread| thread.value[:rate] }]
    end
    [rounds.map(&:first).transpose.map { |runs| together(runs) }, rounds.sum(&:last) / WORKER_ROUNDS]
  end

  # A row's cells: +runs+ (one per worker count), and +separate+, the rate
  # of two separate campaigns at once, when measured.
  def worker_cells(runs, separate = nil)
    one, two = runs
    [*runs.map { |run| fmt(run[:rate]) }, "#{fmt(two[:rate] / one[:rate], 2)}x",
     separate ? "#{fmt(separate / one[:rate], 2)}x" : "",
     *runs.map { |run| run[:coverage] }, *runs.map { |run| run[:corpus] },
     runs.all? { |run| run[:counted] } ? "yes" : "NO"]
  end

  # One campaign of +harness+ with +count+ workers in a fresh directory
  # (ruzzy's +options+ before it; new inputs into a fresh corpus directory
  # beside +seeds+ when given); its numbers, with the seconds from the
  # start to each group's NEW line.
  def workers_run(harness, count, *options, seconds: SECONDS, flags: [], seed: 1, seeds: nil)
    Dir.mktmpdir("ruzzy-bench-workers") do |work|
      corpora = seeds ? [File.join(work, "corpus"), seeds] : []
      started = now
      found = {}
      output = +""
      IO.popen(["ruzzy", *options, "--keep-going", "--workers=#{count}", harness, *corpora, "-seed=#{seed}",
                "-max_total_time=#{seconds}", *flags], err: %i[child out], chdir: work) do |io|
        io.each_line do |line|
          output << line
          title = line[/\A  NEW  \S+ \([^)]*\): (.*)$/, 1]
          found[title] ||= now - started if title
        end
      end
      findings = File.join(work, "ruzzy-findings")
      execs = output[/ruzzy: campaign: (\d+) executions/, 1].to_i
      own = File.read(File.join(findings, "campaign.log")).scan(/^<== worker \d+: .* after (\d+) executions$/)
      { rate: execs.fdiv(seconds), coverage: File.readlines(File.join(findings, "progress.csv")).last.split(",")[2],
        corpus: corpus_size(corpora.first || File.join(findings, "corpus")),
        counted: execs.positive? && own.flatten.sum(&:to_i) == execs, found: }
    end
  end

  # "N × B B": the inputs in the corpus directory +dir+ (the workers'
  # shared one, where libFuzzer also writes each seed it keeps) and their
  # mean size.
  def corpus_size(dir)
    sizes = Dir.glob(File.join(dir, "*")).map { |file| File.size(file) }
    "#{sizes.size} × #{fmt(sizes.sum.fdiv([sizes.size, 1].max))} B"
  end

  # Builds test/fixtures/c_ext/faults.c with AddressSanitizer into +dir+.
  def build_faults(dir)
    config = RbConfig::CONFIG
    source = File.expand_path("../test/fixtures/c_ext/faults.c", DIR)
    output, status = Open3.capture2e("clang", "-shared", "-fPIC", "-O1", "-g", "-fsanitize=address,fuzzer-no-link",
                                     "-I#{config["rubyhdrdir"]}", "-I#{config["rubyarchhdrdir"]}", source,
                                     "-o", File.join(dir, "faults.so"), "-L#{config["libdir"]}",
                                     *config["LIBRUBYARG_SHARED"].split)
    raise "building faults.c failed:\n#{output}" unless status.success?
  end

  TYPED_TARGETS = %w[ipaddr uri].freeze

  # exec/s of typed targets (Ruzzy::Gen, with their defaults: canonical
  # mutator, value profile) and of the same targets carving the same values
  # from bytes with FuzzedDataProvider.
  def typed_speed
    rows = TYPED_TARGETS.map do |name|
      speeds = %w[typed bytes].map do |mode|
        output, = ruzzy(File.join(DIR, "typed", "#{name}.rb"), "-seed=1", "-max_total_time=#{SECONDS}",
                        env: { "MODE" => mode })
        Float(output[/stat::average_exec_per_sec:\s+(\d+)/, 1] || raise("no exec/s from #{name} (#{mode})"))
      end
      [name, fmt(speeds[0]), fmt(speeds[1]), "#{fmt(speeds[1] / speeds[0], 2)}x"]
    end
    table("Typed targets: exec/s, generators vs FuzzedDataProvider on bytes",
          ["target", "typed", "bytes", "bytes / typed"], rows)
  end

  # FuzzedDataProvider operations per second, native vs plain Ruby (a new
  # provider every four operations, as in a harness).
  def data_provider
    output, = ruby(File.join(DIR, "fdp.rb"))
    rows = output.lines.map(&:chomp).map(&:split).select { |cols| cols.size >= 3 }.map do |*name, native, plain|
      [name.join(" "), fmt(Float(native)), fmt(Float(plain)), "#{fmt(Float(native) / Float(plain), 1)}x"]
    end
    table("FuzzedDataProvider: operations per second", ["operation", "native", "plain Ruby", "speed-up"], rows)
  end

  SOLVES = {
    "examples/hello.rb" => File.join(EXAMPLES, "hello.rb"),
    "examples/maze.rb (nested ifs)" => File.join(EXAMPLES, "maze.rb"),
    "examples/ternary_maze.rb (one-line ternaries)" => File.join(EXAMPLES, "ternary_maze.rb"),
    "14-byte magic string (==)" => File.join(DIR, "solve", "magic_string.rb"),
    "8-byte magic integer" => File.join(DIR, "solve", "magic_integer.rb"),
    "magic prefix (start_with?)" => File.join(DIR, "solve", "magic_prefix.rb"),
    "magic word in case/when" => File.join(DIR, "solve", "case_when.rb"),
    "six 1-byte compares with && on one line" => File.join(DIR, "solve", "chained_bytes.rb"),
    "two-stage integer checksum" => File.join(DIR, "solve", "checksum.rb"),
    "record: unpack1(\"N\") magic, getbyte checksum" => File.join(DIR, "solve", "record_checksum.rb"),
    "chunks with a CRC-32 checked before their type" => File.join(DIR, "solve", "chunk_crc.rb"),
    "magic key in a 64-entry Hash" => File.join(DIR, "solve", "hash_key.rb"),
    "magic member of a 40-element Array (include?)" => File.join(DIR, "solve", "array_member.rb"),
    "token checked by a regexp (match?)" => File.join(DIR, "solve", "regex_token.rb"),
    "float constant (unpack1(\"E\") ==)" => File.join(DIR, "solve", "float_constant.rb"),
    "number in text (Integer() ==)" => File.join(DIR, "solve", "integer_text.rb"),
    "keyword in a StringScanner tokenizer" => File.join(DIR, "solve", "scanner_keyword.rb"),
    "date-shaped token checked by Date.new" => File.join(DIR, "solve", "date_token.rb"),
    "maze whose positions coverage cannot see" => File.join(DIR, "solve", "maze_plain.rb"),
    "the same maze, positions to Ruzzy.explore_state" => File.join(DIR, "solve", "maze_explore_state.rb"),
    "typed: 16-bit port, path prefix, flag" => File.join(DIR, "solve", "typed_request.rb"),
    "typed: list with a magic first element and member" => File.join(DIR, "solve", "typed_list.rb"),
    "typed: the key looked up, out of 20,000 names" => File.join(DIR, "solve", "typed_pool_key.rb")
  }.freeze

  # Median time to solve each target (no sanitizer preload).
  def solves
    rows = SOLVES.map { |label, path| [label, *solve_cells(path)] }
    table("Time to solve (median over seeds #{SEEDS.join(", ")}; limit 60 s)",
          %w[target solved seconds execs], rows)
  end

  # Solved runs out of SEEDS, median seconds and median execs of fuzzing
  # +path+ with ruzzy's +flags+.
  def solve_cells(path, *flags)
    results = SEEDS.map do |seed|
      output, seconds, status = ruzzy(*flags, path, "-seed=#{seed}", "-max_total_time=60")
      [status.exitstatus == 77, seconds, output[/stat::number_of_executed_units: (\d+)/, 1].to_i]
    end
    ["#{results.count(&:first)}/#{results.size}", fmt(median(results.map { |r| r[1] }), 2),
     fmt(median(results.map(&:last)))]
  end
end

# The two engines side by side (docs/engines.md).
module Bench
  ENGINES = %w[libfuzzer libafl].freeze

  module_function

  # The solve table's targets under each engine: time to solve.
  def engine_solves
    rows = SOLVES.map { |label, path| [label, *ENGINES.flat_map { |engine| solve_cells(path, "--engine=#{engine}") }] }
    table("Time to solve under each engine (median of #{SEEDS.size} runs; LibAFL ignores -seed; limit 60 s)",
          ["target", *ENGINES.flat_map { |engine| ["#{engine} solved", "seconds", "execs"] }], rows)
  end

  # The standard-library parsers under each engine, from an empty corpus
  # for CORPUS_SECONDS: execs/s and the coverage reached (replayed with
  # `ruzzy cov`, so both engines are measured by Ruby's own Coverage).
  def engine_parsers
    rows = PARSERS.map { |name| [name, *ENGINES.flat_map { |engine| engine_coverage(name, engine) }] }
    table("Standard-library parsers under each engine, #{CORPUS_SECONDS} s from an empty corpus; " \
          "coverage replayed with `ruzzy cov`",
          ["target", *ENGINES.flat_map { |engine| ["#{engine} execs/s", "lines", "branches", "stopped by"] }], rows)
  end

  def engine_coverage(name, engine)
    Dir.mktmpdir("ruzzy-bench-engine") do |dir|
      output, elapsed, = ruzzy("--engine=#{engine}", target(name), dir, "-seed=1",
                               "-max_total_time=#{CORPUS_SECONDS}")
      execs = output[/stat::number_of_executed_units: (\d+)/, 1].to_i
      finding = output[/uncaught Ruby exception in the fuzz target\n(\S+):/, 1]
      lines, branches = replayed_coverage(name, dir)
      [fmt(execs.fdiv([elapsed, CORPUS_SECONDS].min)), lines, branches, finding || "-"]
    end
  end

  # Lines and branches ("covered/total") that replaying +dir+ reaches in
  # every file it loads (the parser's own included).
  def replayed_coverage(name, dir)
    output, = Dir.mktmpdir("ruzzy-bench-cov") { |report| ruzzy("cov", "--all", "-o", report, target(name), dir) }
    found = output.match(%r{\d+ inputs .*lines (\d+)/(\d+) .*branches (\d+)/(\d+)})
    found ? ["#{found[1]}/#{found[2]}", "#{found[3]}/#{found[4]}"] : %w[- -]
  end
end

# C-extension gems built for fuzzing (bench/c_extensions.rb).
module Bench
  LEVELS = %w[1 2 3].freeze

  module_function

  # Executions per second on each gem's fixed document: built with the flags
  # docs/c-extensions.md and Ruzzy 0.8 gave (no -O), and by `ruzzy
  # build-ext` at each level; the same recipe build under Ruzzy 0.8 when
  # BENCH_RUZZY_0_8_HOME names its gem home.
  def c_extensions
    require_relative "c_extensions"
    rows = Dir.mktmpdir("ruzzy-bench-cext") do |work|
      CExtensions.selected.map { |name| c_extension_row(name, work) }
    end
    header = ["gem", "recipe (no -O)", *LEVELS.map { |level| "build-ext -O#{level}" }, "-O2 / recipe"]
    header += ["Ruzzy 0.8, recipe", "ruzzy -O2 / Ruzzy 0.8"] if RUZZY_0_8_HOME
    table("C extensions under AddressSanitizer: execs/s on a fixed document, #{SECONDS} s each", header, rows)
  end

  def c_extension_row(name, work)
    recipe = CExtensions.unpack(name, File.join(work, "recipe"))
    CExtensions.build(recipe, env: CExtensions::RECIPE)
    speeds = { recipe: fixed_input_speed(name, recipe) }
    LEVELS.each do |level|
      dir = CExtensions.unpack(name, File.join(work, "O#{level}"))
      CExtensions.build(dir, "-O", level)
      speeds[level] = fixed_input_speed(name, dir)
    end
    row = [name, fmt(speeds[:recipe]), *LEVELS.map { |level| fmt(speeds[level]) },
           "#{fmt(speeds["2"] / speeds[:recipe], 2)}x"]
    return row unless RUZZY_0_8_HOME

    old = fixed_input_speed(name, recipe, reference: true)
    row + [fmt(old), "#{fmt(speeds["2"] / old, 2)}x"]
  end

  # average exec/s of the fixed-input harness on the gem built in +dir+.
  def fixed_input_speed(name, dir, reference: false)
    env = CExtensions.harness_env(name, dir)
    flags = ["-max_total_time=#{SECONDS}", "-print_final_stats=1"]
    output, = if reference
                home = ruzzy_0_8_env
                asan, = Open3.capture2(home, RbConfig.ruby, "-rruzzy", "-e", "print Ruzzy::ASAN_PATH")
                run(RbConfig.ruby, CExtensions::HARNESS, *flags,
                    env: env.merge(home, "LD_PRELOAD" => asan, "ASAN_OPTIONS" => CExtensions::RUZZY_0_8_ASAN_OPTIONS))
              else
                ruzzy("--sanitizer=address", CExtensions::HARNESS, *flags, env:)
              end
    speed = output[/stat::average_exec_per_sec:\s+(\d+)/, 1]
    raise "no exec/s from #{name} in #{dir}:\n#{output.lines.last(20).join}" unless speed

    Float(speed)
  end
end

# The bug detectors' examples (examples/detectors/NAME/fuzz.rb and fuzz_safe.rb).
module Bench
  DETECTOR_EXAMPLES = Dir.children(File.join(EXAMPLES, "detectors"))
                         .select { |name| File.directory?(File.join(EXAMPLES, "detectors", name)) }.sort.freeze

  module_function

  # Median time for each detector example's bug to be found from an empty
  # corpus, and what the safe twin finds in SAFE_SECONDS.
  def detectors
    rows = DETECTOR_EXAMPLES.map do |name|
      harness = File.join(EXAMPLES, "detectors", name, "fuzz.rb")
      results = SEEDS.map do |seed|
        output, seconds, = ruzzy(harness, "-seed=#{seed}", "-max_total_time=60")
        [output.match?(/bug detector #{name} fired/), seconds, output[/stat::number_of_executed_units: (\d+)/, 1].to_i]
      end
      safe, = ruzzy(File.join(EXAMPLES, "detectors", name, "fuzz_safe.rb"), "-seed=1",
                    "-max_total_time=#{SAFE_SECONDS}")
      safe_finding = safe[/ERROR: (?:ruzzy|libFuzzer): ([^\n]{0,60})/, 1]
      [name, "#{results.count(&:first)}/#{results.size}", fmt(median(results.map { |r| r[1] }), 2),
       fmt(median(results.map(&:last))), fmt(safe[/stat::number_of_executed_units: (\d+)/, 1].to_i),
       safe_finding || "none"]
    end
    table("Bug detectors: examples/detectors/NAME/fuzz.rb found (median over seeds #{SEEDS.join(", ")}, limit " \
          "60 s); fuzz_safe.rb for #{SAFE_SECONDS} s, -seed=1",
          ["example", "found", "seconds", "execs", "safe twin: execs", "safe twin: finding"], rows)
  end

  # What the detectors cost on the standard-library parsers: µs per input
  # replaying each parser's saved corpus with them on (the default) and
  # off; the corpus run (detectors on) names any finding.
  def detector_cost
    rows = PARSERS.map do |name|
      dir, speed, finding = corpus(name)
      files = Dir.children(dir).sort.map { |file| File.join(dir, file) }
      times = [(3 * speed / files.size).ceil, 1].max
      on, off = [[], ["--disable-detectors=all"]].map { |flags| replay_us(name, flags, files, times) }
      [name, fmt(on, 1), fmt(off, 1), "#{fmt(((on / off) - 1) * 100, 1)}%", finding || "-"]
    end
    table("Bug detectors' cost on fixed inputs: µs per input, the #{CORPUS_SECONDS} s corpus replayed",
          ["target", "detectors on", "--disable-detectors=all", "cost", "corpus run stopped by"], rows)
  end

  # The detectors' cost counted, not timed: instructions per execution of
  # the fixed-document harness with every detector on and with all off
  # (callgrind, which a busy machine does not change).
  def detector_instructions
    valgrind!("detector_cost")
    rows = PARSERS.map do |name|
      on, off = [[], ["--disable-detectors=all"]].map { |flags| fixed_instructions(name, flags) }
      [name, fmt(on), fmt(off), "#{fmt((on.fdiv(off) - 1) * 100, 1)}%"]
    end
    table("Bug detectors' cost per execution on a fixed document: instructions (callgrind, inputs 101 to 300)",
          ["parser", "detectors on", "--disable-detectors=all", "cost"], rows)
  end

  # Instructions (valgrind's callgrind, which counts the same on a busy
  # machine as on an idle one) per hooked comparison and per coverage
  # event: two runs of different lengths, the difference divided by the
  # extra iterations, so start-up cancels out. The table to compare two
  # builds with when wall-clock numbers are noisy.
  def instructions
    valgrind!("instructions")

    compare = File.join(DIR, "compare_cost.rb")
    rows = %w[integer string match fail].map do |kind|
      [kind, fmt(per_iteration(compare, "hooked", kind) - per_iteration(compare, "plain", kind))]
    end
    table("Comparison hooks: instructions per comparison over plain Ruby (callgrind)",
          ["comparison (bench/compare_cost.rb)", "instructions"], rows)
    events = File.join(DIR, "events.rb")
    rows = %w[hundred_events hundred_ifs].map do |name|
      traced = per_iteration(events, "traced", name, short: 2_000, long: 12_000)
      untraced = per_iteration(events, "untraced", name, short: 2_000, long: 12_000)
      [name, fmt(traced), fmt(untraced), fmt(traced - untraced)]
    end
    table("Coverage: instructions per call of the target (callgrind)",
          ["target (bench/events.rb)", "traced", "untraced", "traced - untraced"], rows)
    fixed_document_instructions
  end

  # Instructions per execution of the fixed-document harness, in each
  # configuration of the fixed_documents section.
  def fixed_document_instructions
    rows = PARSERS.map do |name|
      counts = FIXED_CONFIGURATIONS.values.map { |flags| fixed_instructions(name, flags) }
      [name, *counts.map { |count| fmt(count) }, "#{fmt(counts.first.fdiv(counts.last), 2)}x"]
    end
    table("Per execution on a fixed document: instructions (callgrind, inputs 101 to 300)",
          ["parser", *FIXED_CONFIGURATIONS.keys, "ruzzy / untraced"], rows)
  end

  # Quiet coverage on, every quiet method switched off after the third
  # input (on a fixed document every method is quiet by then), whatever the
  # policy's share or trial would decide there: bench/fixed_documents/harness.rb
  # BENCH_SWITCH_QUIET, with the tests' probes.
  QUIET_METHODS_OFF = { "RUZZY_QUIET_COVERAGE" => "0.001", "RUZZY_TEST_PROBES" => "1",
                        "BENCH_SWITCH_QUIET" => "1" }.freeze

  # Quiet coverage (docs/coverage.md) per execution on a fixed document,
  # in one run: untraced, with every coverage event on
  # (--no-quiet-coverage), and once the methods that find nothing new are
  # switched off (QUIET_METHODS_OFF); beside them Ruby's own branch
  # coverage in a plain loop (its cost over the same loop without it), and
  # Ruzzy 0.8 when BENCH_RUZZY_0_8_HOME names its gem home. First
  # instructions (callgrind; inputs 400 to 800, the same inputs in every
  # column), then the same columns in wall time (execs/s in SECONDS of
  # each, one process at a time; Ruby's coverage as µs per execution).
  QUIET_CONFIGURATIONS = {
    "untraced" => [FIXED_CONFIGURATIONS["untraced"], {}],
    "every event on" => [["--no-quiet-coverage"], {}],
    "quiet methods off" => [[], QUIET_METHODS_OFF]
  }.freeze

  def quiet
    valgrind!("quiet")
    measured = PARSERS.to_h do |name|
      [name, { instructions: quiet_instructions(name, [400, 800]), seconds: quiet_seconds(name) }]
    end
    labels = [*QUIET_CONFIGURATIONS.keys.drop(1), *("Ruzzy 0.8" if RUZZY_0_8_HOME)]
    header = ["parser", "untraced", "Ruby's branch coverage / its loop without",
              *labels.flat_map { |label| [label, "/ untraced"] }, "quiet / Ruby's branch coverage"]
    header << "Ruzzy 0.8 / quiet" if RUZZY_0_8_HOME
    { instructions: "instructions (callgrind, the same inputs in each column)",
      seconds: "execs/s (#{SECONDS} s each, one process at a time)" }.each do |measure, title|
      rows = measured.map { |name, costs| [name, *quiet_cells(costs[measure], measure)] }
      table("Quiet coverage per execution on a fixed document: #{title}", header, rows)
    end
  end

  # Instructions per execution: untraced, each configuration and Ruzzy 0.8
  # (when measured) under a fuzzer, and the plain loop's ratio with and
  # without Ruby's branch coverage.
  def quiet_instructions(name, runs)
    fuzzed = QUIET_CONFIGURATIONS.values.map { |flags, env| fixed_instructions(name, flags, runs:, env:) }
    fuzzed << fixed_instructions(name, nil, runs:) if RUZZY_0_8_HOME
    coverage = %w[branches none].map { |mode| plain_loop_instructions(name, mode, runs) }
    { fuzzed:, coverage: coverage.first / coverage.last }
  end

  # Seconds per execution, as quiet_instructions.
  def quiet_seconds(name)
    fuzzed = QUIET_CONFIGURATIONS.values.map { |flags, env| 1 / fixed_speed(name, flags, env:) }
    fuzzed << (1 / fixed_speed(name, nil)) if RUZZY_0_8_HOME
    { fuzzed:, coverage: ruby_coverage_cost(name) }
  end

  # The cells of one measure (+costs+ from quiet_instructions or
  # quiet_seconds): untraced, Ruby's branch coverage, each configuration
  # and its cost over untraced, quiet over Ruby's coverage, and Ruzzy 0.8
  # over quiet.
  def quiet_cells(costs, measure)
    untraced, *configured = costs[:fuzzed]
    write = measure == :seconds ? ->(cost) { fmt(1 / cost) } : ->(cost) { fmt(cost) }
    ratio = ->(cost) { "#{fmt(cost, 2)}x" }
    quiet = configured[1].fdiv(untraced)
    cells = [write.call(untraced), ratio.call(costs[:coverage]),
             *configured.flat_map { |cost| [write.call(cost), ratio.call(cost.fdiv(untraced))] },
             ratio.call(quiet / costs[:coverage])]
    cells << ratio.call(configured[2].fdiv(configured[1])) if RUZZY_0_8_HOME
    cells
  end

  # What quiet coverage costs in bug-finding power: one run of
  # CORPUS_SECONDS per parser and seed (SEEDS) from an empty corpus, with
  # every coverage event on (the default) and with quiet coverage, one after
  # the other: executions, libFuzzer's final edges and features, and the
  # lines and branches replaying the corpus reaches under Ruby's own
  # coverage (`ruzzy cov`).
  def quiet_reach
    rows = PARSERS.product(SEEDS).flat_map do |name, seed|
      [["every event on (default)", []], ["quiet", ["--quiet-coverage"]]].map do |label, flags|
        Dir.mktmpdir("ruzzy-bench-quiet") do |dir|
          output, elapsed, = ruzzy(*flags, target(name), dir, "-seed=#{seed}", "-max_total_time=#{CORPUS_SECONDS}")
          execs = output[/stat::number_of_executed_units: (\d+)/, 1].to_i
          status = output.lines.grep(/\A#\d+\s/).last.to_s
          edges, features = status.match(/cov: (\d+) ft: (\d+)/)&.captures || %w[- -]
          [name, seed, label, fmt(execs.fdiv([elapsed, CORPUS_SECONDS].min)), edges, features,
           *replayed_coverage(name, dir)]
        end
      end
    end
    table("Quiet coverage and what a run reaches: #{CORPUS_SECONDS} s from an empty corpus",
          ["parser", "seed", "coverage", "execs/s", "edges (cov)", "features (ft)", "lines", "branches"], rows)
  end

  # YJIT under ruzzy: execs/s on a fixed document without and with YJIT
  # (RUBYOPT=--yjit, which every process of the run inherits), untraced,
  # with every coverage event on and once quiet coverage has switched the
  # quiet methods off (QUIET_METHODS_OFF: after the third input; no window
  # opens within SECONDS), and what YJIT gains the same work with no fuzzer
  # (bench/fixed_documents/ruby_coverage.rb none).
  YJIT_CONFIGURATIONS = {
    "untraced" => [FIXED_CONFIGURATIONS["untraced"], {}],
    "every event on" => [["--no-quiet-coverage"], {}],
    "quiet methods off" => [[], QUIET_METHODS_OFF]
  }.freeze

  def yjit
    abort "the yjit section needs a Ruby with YJIT (ruby --yjit)" unless yjit?
    rows = PARSERS.map do |name|
      plain = [[], ["--yjit"]].map { |options| plain_loop_us(name, "none", *options) }
      cells = YJIT_CONFIGURATIONS.values.flat_map do |flags, env|
        without, with = [{}, { "RUBYOPT" => "--yjit" }].map { |yjit| fixed_speed(name, flags, env: env.merge(yjit)) }
        [fmt(without), fmt(with), "#{fmt(with / without, 2)}x"]
      end
      [name, "#{fmt(plain.first / plain.last, 2)}x", *cells]
    end
    header = ["parser", "YJIT's gain, no fuzzer"] +
             YJIT_CONFIGURATIONS.keys.flat_map { |label| ["#{label} execs/s", "with YJIT", "gain"] }
    table("YJIT under ruzzy (#{RUBY_VERSION}): execs/s on a fixed document, #{SECONDS} s each, without and with " \
          "RUBYOPT=--yjit", header, rows)
  end

  def yjit?
    output, = ruby("--yjit", "-e", "print defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?")
    output == "true"
  end

  # Stops the benchmarks unless valgrind is installed.
  def valgrind!(section)
    return if system("which valgrind", out: File::NULL)

    abort "the #{section} section needs valgrind (apt-get install valgrind)"
  end

  # Instructions per execution of the fixed-document harness for +name+
  # under ruzzy with +flags+ (nil: Ruzzy 0.8): runs of 100 and 300 inputs,
  # the difference over 200, so start-up cancels out.
  def fixed_instructions(name, flags, runs: [100, 300], env: {})
    instructions_per(runs, "#{name} #{flags.inspect}") do |inputs|
      fixed_run(name, flags, ["-runs=#{inputs}", "-seed=1"], tool: CALLGRIND, env:).first
    end
  end

  # Instructions per execution of +name+'s fixed document in a plain loop
  # with no fuzzer (bench/fixed_documents/ruby_coverage.rb), with Ruby's
  # branch coverage ("branches") or none, over the same +runs+.
  def plain_loop_instructions(name, mode, runs)
    script = File.join(FIXED_DOCUMENTS, "ruby_coverage.rb")
    instructions_per(runs, "#{script} #{name} #{mode}") do |calls|
      run(*CALLGRIND, RbConfig.ruby, script, name, mode, "--calls=#{calls}").first
    end
  end

  # Instructions per unit between two runs (+runs+, the short and the long
  # one): the block runs the command for a number of units and returns its
  # output; +what+ names it in the error when callgrind counted nothing.
  def instructions_per(runs, what)
    counts = runs.map do |units|
      output = yield units
      collected(output) or raise "no instruction count from #{what}:\n#{output.lines.last(20).join}"
    end
    (counts.last - counts.first).fdiv(runs.last - runs.first)
  end

  # The instructions callgrind counted in the busiest process it traced
  # (the one that ran the inputs; `env` and launchers count little), or nil.
  def collected(output)
    output.scan(/Collected : (\d+)/).map { |(count)| Integer(count) }.max
  end

  # What `ruzzy rack` costs a web app per request against Rack::MockRequest
  # with no fuzzer (bench/web_rack.rb, on examples/web/rails; its own table).
  def web_rack
    output, _, status = ruby(File.join(DIR, "web_rack.rb"))
    puts status.success? ? output : "web_rack: failed (#{status}):\n#{output.lines.last(20).join}"
  end

  # Instructions per iteration of +script+, run as `script MODE N ARG`.
  def per_iteration(script, mode, arg, short: 20_000, long: 120_000)
    instructions_per([short, long], "#{script} #{mode}") do |iterations|
      run(*CALLGRIND, RbConfig.ruby, script, mode, iterations.to_s, arg).first
    end
  end
end

SECTIONS = %w[bridge events compare_cost data_provider typed_speed reached overhead overhead_fixed fixed_documents
              parsers campaign workers solves engine_solves engine_parsers detectors detector_cost detector_instructions
              instructions quiet quiet_reach yjit c_extensions web_rack].freeze
chosen = ARGV.empty? ? SECTIONS : ARGV
unknown = chosen - SECTIONS
abort "unknown section(s) #{unknown.join(", ")}; choose from #{SECTIONS.join(", ")}" unless unknown.empty?

puts "## ruzzy benchmarks (#{RUBY_DESCRIPTION})"
chosen.each { |section| Bench.public_send(section) }

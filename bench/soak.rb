# frozen_string_literal: true

# A soak benchmark: long runs of real parsers, watching memory and speed
# over time. Not part of `rake bench` (it takes an hour).
#
#   ruby bench/soak.rb [MINUTES] [OUT_DIR]     # default 60 minutes, ./soak
#
# Runs bench/targets/csv.rb and bench/targets/psych.rb side by side (one
# core each), each from a small seed corpus, for MINUTES with -seed=1.
# Every minute each run records its executions in that minute and its
# resident memory (bench/soak_harness.rb; exceptions the parsers raise are
# counted, not reported, so each run lasts its whole time); at the end this
# prints a Markdown table and writes OUT_DIR/soak.png (gnuplot, Debian's
# gnuplot-nox).

require "fileutils"
require "open3"

MINUTES = Integer(ARGV.fetch(0, "60"))
OUT = File.expand_path(ARGV.fetch(1, "soak"))
TARGETS = {
  "csv" => ["a,b,c\n1,2,3\n", "\"quoted, field\",x\n", "a;b\n\"\"\"\"\n"],
  "psych" => ["a: 1\nb: [x, y]\n", "- one\n- {k: v}\n", "text: |\n  block\n"]
}.freeze

def run(name, seeds)
  dir = File.join(OUT, name)
  corpus = File.join(dir, "corpus")
  FileUtils.rm_rf(dir)
  FileUtils.mkdir_p(corpus)
  seeds.each_with_index { |seed, i| File.write(File.join(corpus, "seed#{i}"), seed) }
  log = File.join(dir, "samples.tsv")
  harness = File.join(__dir__, "soak_harness.rb")
  target = File.join(__dir__, "targets", "#{name}.rb")
  command = ["ruzzy", harness, target, log, "--", corpus, "-seed=1", "-max_total_time=#{MINUTES * 60}"]
  spawn(*command, chdir: dir, out: File.join(dir, "stdout.txt"), err: File.join(dir, "fuzz.log"))
end

def samples(name)
  File.readlines(File.join(OUT, name, "samples.tsv")).map { |line| line.split.map { |v| Float(v) } }
end

def plot(names)
  script = <<~GNUPLOT
    set terminal pngcairo size 1000,700
    set output "#{File.join(OUT, "soak.png")}"
    set multiplot layout 2,1 title "ruzzy soak: #{MINUTES} min, -seed=1"
    set xlabel "minute"
    set ylabel "execs/s"
    set key top right
    plot #{names.map { |n| "'#{File.join(OUT, n, "samples.tsv")}' using 1:3 with linespoints title '#{n}'" }.join(", ")}
    set ylabel "RSS (MB)"
    plot #{names.map { |n| "'#{File.join(OUT, n, "samples.tsv")}' using 1:4 with linespoints title '#{n}'" }.join(", ")}
    unset multiplot
  GNUPLOT
  _, status = Open3.capture2e("gnuplot", stdin_data: script)
  warn "gnuplot failed; no plot" unless status.success?
end

FileUtils.mkdir_p(OUT)
pids = TARGETS.map { |name, seeds| run(name, seeds) }
pids.each { |pid| Process.wait(pid) }

puts "| minute | #{TARGETS.keys.map { |n| "#{n} execs/s | #{n} RSS MB" }.join(" | ")} |"
puts "|---|#{TARGETS.keys.map { "---|---" }.join("|")}|"
series = TARGETS.keys.to_h { |name| [name, samples(name)] }
series.values.map(&:size).max.times do |i|
  cells = series.values.map do |rows|
    row = rows[i]
    row ? "#{row[2].round} | #{row[3].round}" : "- | -"
  end
  puts "| #{i + 1} | #{cells.join(" | ")} |"
end
series.each do |name, rows|
  next if rows.size < 4

  speed = rows.map { |r| r[2] }
  rss = rows.map { |r| r[3] }
  first = (speed.first(5).sum / 5).round
  last = (speed.last(5).sum / 5).round
  puts "\n#{name}: execs/s first 5 min #{first}, last 5 min #{last}; " \
       "RSS #{rss.first.round} MB at minute 1, #{rss.max.round} MB peak, #{rss.last.round} MB at the end; " \
       "#{rows.last[4].round} inputs raised (counted, not reported)"
end
plot(TARGETS.keys)
puts "\nplot: #{File.join(OUT, "soak.png")}"

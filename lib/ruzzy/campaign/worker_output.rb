# frozen_string_literal: true

require "shellwords"
require_relative "../campaign_protocol"
require_relative "../finding_kinds"

module Ruzzy
  module Campaign
    # Reads what a worker prints (its standard error and output, merged),
    # line by line: copies every line to the campaign log, keeps the
    # numbers of its engine's progress lines, and keeps the text printed
    # since the last of them, which is the report when the worker dies of a
    # finding.
    #
    # The worker's artifacts directory is deleted once the supervisor filed
    # what it left there, so the log never names it: a slow input's file
    # (kept in SLOW_UNITS) is named where it will be kept, and the lines
    # from the first naming any other artifact (a finding's report at the
    # worker's end) wait until the artifacts are filed (#release), to be
    # written naming where each went.
    class WorkerOutput
      # The prefix of the slow inputs' artifacts.
      SLOW_UNIT = Findings::KINDS[:slow_unit].prefix

      # The engines' progress lines, with the executions so far, the
      # coverage (edge counters reached) and the corpus size they give.
      PROGRESS_LINES = [
        # libFuzzer: "#1234 NEW cov: 56 ft: 78 corp: 9/10b lim: 4 exec/s: 11 rss: 12Mb".
        %r{\A#(?<executions>\d+)\s+\w+\s+cov: (?<coverage>\d+) ft: \d+ corp: (?<corpus>\d+)/},
        # LibAFL's runtime, its monitor's line for the worker's one client (at
        # every new corpus entry and every 15 s), its statistics in any order:
        # "   (CLIENT) corpus: 9, objectives: 0, executions: 1234, exec/sec: 1.2k, edges: 56/2048 (2%), ...".
        %r{\A\s*\(CLIENT\)\ corpus:\ (?<corpus>\d+),\ objectives:\ \d+,\ executions:\ (?<executions>\d+),
           (?:.*,\ edges:\ (?<coverage>\d+)/)?}x
      ].freeze
      # The count of executions both engines print when the worker ends, at
      # its time limit or with a finding (libFuzzer with -print_final_stats=1,
      # a ruzzy default; ruzzy itself under LibAFL): exact, where the last
      # progress line may be seconds old.
      FINAL_EXECUTIONS = /\Astat::number_of_executed_units: (\d+)$/
      # The engine has read the corpus: libFuzzer's INITED progress line,
      # LibAFL's line after loading the corpus directories.
      INITIALISED = /\A(?:#\d+\s+INITED\s|We imported \d+ inputs from disk\.$)/
      # The engine's other status lines (LibAFL's monitor's totals line, which
      # comes before each client line; its count of generated inputs): never
      # part of a report.
      STATUS = /\A(?:\[[^\]]*\]\s+\(GLOBAL\) |We imported \d+ inputs from )/

      # Numbers from the last progress line (the executions from the final
      # count once printed); coverage and corpus are nil until an engine
      # line gave them.
      Progress = Struct.new(:executions, :coverage, :corpus)

      attr_reader :progress, :reached
      # The corpus directory a fuzz test's worker announced, or nil.
      attr_reader :corpus_dir
      # What the worker's target said when it started (target_line), or nil.
      attr_reader :target
      # The notes the worker printed (note_line), in order.
      attr_reader :notes

      # +log+: the campaign log. +artifacts+: the worker's artifacts
      # directory (its -artifact_prefix), +slow_units+ where the campaign
      # keeps the slow inputs written there.
      def initialize(log, artifacts: nil, slow_units: nil)
        @log = log
        @pending = +""
        @report = []
        @progress = nil
        @initialised = false
        @notes = []
        @artifacts = artifacts && WorkerOutput.named(artifacts, slow_units)
        @held = nil
      end

      # [[+dir+/, +kept+/]] as a line may name them: as they are, and
      # shell-escaped (in a command line).
      def self.named(dir, kept)
        escaped = [dir, kept].map { |path| path && Shellwords.escape(path) }
        [[dir, kept], escaped].uniq.map { |pair| pair.map { |path| path && "#{path}/" } }
      end

      # Takes a chunk of output; yields [name, kind, title] for each new
      # finding group the worker announced.
      def feed(chunk, &)
        @pending << chunk
        while (newline = @pending.index("\n"))
          line = @pending.slice!(0..newline).scrub
          take(line, &)
        end
      end

      # The worker has ended: takes a last unterminated line.
      def finish(&)
        take("#{@pending.scrub}\n", &) unless @pending.empty?
        @pending = +""
      end

      # What the worker printed since its last progress line.
      def report
        @report.join
      end

      # Whether the engine had read the corpus before the worker ended.
      def initialised?
        @initialised
      end

      # Writes +text+ into the campaign log, after the lines held back if
      # any (they name the worker's artifacts, see #release).
      def log(text)
        text = kept_slow_units(text)
        if @held || @artifacts&.any? { |dir, _| text.include?(dir) }
          (@held ||= +"") << text
        else
          @log.write(text)
        end
      end

      # The worker's artifacts are filed: writes the lines held back into
      # the log as the block rewrites them (naming where each artifact
      # went), and rewrites the report the same way.
      def release
        @report = [yield(report)] unless @report.empty?
        held = @held
        @held = nil
        @log.write(yield(held)) if held
      end

      private

      # +text+ naming the slow inputs in the worker's artifacts directory
      # where the campaign keeps them (libFuzzer's own line too:
      # `artifact_prefix='DIR/'; Test unit written to DIR/slow-unit-<sha1>`).
      def kept_slow_units(text)
        return text unless @artifacts&.any? { |dir, kept| kept && text.include?("#{dir}#{SLOW_UNIT}") }

        dir, kept = @artifacts.first
        text = text.gsub("artifact_prefix='#{dir}'") { "artifact_prefix='#{kept}'" }
        @artifacts.reduce(text) { |result, (from, to)| result.gsub("#{from}#{SLOW_UNIT}") { "#{to}#{SLOW_UNIT}" } }
      end

      def take(line)
        log(line)
        @initialised ||= INITIALISED.match?(line)
        if (progress = parse_progress(line))
          @progress = progress
          @report.clear
        elsif STATUS.match?(line)
          @report.clear
        elsif (reached = Campaign.parse_reached(line))
          take_reached(*reached)
        elsif (dir = Campaign.parse_corpus(line))
          @corpus_dir = dir
        elsif (target = Campaign.parse_target(line))
          @target = target
        elsif (note = Campaign.parse_note(line))
          @notes << note
        elsif (announced = Campaign.parse_new_group(line))
          @report.clear
          yield announced
        else
          take_final_count(line)
          @report << line
        end
      end

      # The numbers of an engine's progress line, or nil; a LibAFL line
      # without the edges keeps the last coverage, and the count of
      # executions never goes down (the worker's own count may be ahead).
      def parse_progress(line)
        match = PROGRESS_LINES.lazy.filter_map { |pattern| line.match(pattern) }.first
        return unless match

        executions = [match[:executions].to_i, @progress&.executions.to_i].max
        Progress.new(executions, match[:coverage]&.to_i || @progress&.coverage, match[:corpus].to_i)
      end

      # A worker's reached_line: what its coverage reached, and its own
      # count of inputs, newer than the engine's last progress line.
      def take_reached(lines, edges, all_lines, executions)
        @reached = [lines, edges, all_lines]
        return if @progress && @progress.executions >= executions

        @progress = Progress.new(executions, @progress&.coverage, @progress&.corpus)
      end

      def take_final_count(line)
        executions = line[FINAL_EXECUTIONS, 1] or return

        @progress = Progress.new(executions.to_i, @progress&.coverage, @progress&.corpus)
      end
    end
  end
end

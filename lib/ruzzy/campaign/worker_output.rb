# frozen_string_literal: true

require_relative "protocol"

module Ruzzy
  module Campaign
    # Reads what a worker prints (its standard error and output, merged),
    # line by line: copies every line to the campaign log, keeps the
    # numbers of its engine's progress lines, and keeps the text printed
    # since the last of them, which is the report when the worker dies of a
    # finding.
    class WorkerOutput
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

      def initialize(log)
        @log = log
        @pending = +""
        @report = []
        @progress = nil
        @initialised = false
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

      private

      def take(line)
        @log.write(line)
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

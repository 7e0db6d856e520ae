# frozen_string_literal: true

require_relative "protocol"

module Ruzzy
  module Campaign
    # Reads what a worker prints (its standard error and output, merged),
    # line by line: copies every line to the campaign log, keeps the
    # numbers of libFuzzer's progress lines, and keeps the text printed
    # since the last progress line, which is the report when the worker
    # dies of a finding.
    class WorkerOutput
      # libFuzzer's progress line: "#1234 NEW cov: 56 ft: 78 corp: 9/10b ... exec/s: 11 rss: 12Mb".
      PROGRESS = %r{\A#(\d+)\s+(\w+)\s+cov: (\d+) ft: \d+ corp: (\d+)/\S+.*? exec/s: (\d+)}

      # Numbers from the last progress line.
      Progress = Struct.new(:executions, :coverage, :corpus, :exec_per_second)

      attr_reader :progress, :reached

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

      # Whether libFuzzer had read the corpus (printed INITED) before the
      # worker ended.
      def initialised?
        @initialised
      end

      private

      def take(line)
        @log.write(line)
        if (match = line.match(PROGRESS))
          executions, event, *numbers = match.captures
          @progress = Progress.new(executions.to_i, *numbers.map(&:to_i))
          @initialised ||= event == "INITED"
          @report.clear
        elsif (reached = Campaign.parse_reached(line))
          @reached = reached
        elsif (announced = Campaign.parse_new_group(line))
          @report.clear
          yield announced
        else
          @report << line
        end
      end
    end
  end
end

# frozen_string_literal: true

module Ruzzy
  module Campaign
    # progress.csv in a findings directory: how a campaign went, a row every
    # INTERVAL seconds (seconds since the start, executions, coverage as
    # libFuzzer counts it, corpus size, findings, groups). The supervisor
    # writes it; `ruzzy cov` plots it.
    class ProgressLog
      FILE = "progress.csv"
      COLUMNS = %w[seconds executions coverage corpus findings groups].freeze
      INTERVAL = 5

      Row = Struct.new(*COLUMNS.map(&:to_sym))

      # The rows of +dir+'s log ([] without one).
      def self.read(dir)
        path = File.join(dir, FILE)
        return [] unless File.file?(path)

        File.readlines(path, chomp: true).drop(1).filter_map do |line|
          values = line.split(",")
          Row.new(*values.map { |value| Float(value) }) if values.size == COLUMNS.size
        rescue ArgumentError
          nil
        end
      end

      # Starts a new log in +dir+.
      def initialize(dir)
        @path = File.join(dir, FILE)
        File.write(@path, "#{COLUMNS.join(",")}\n")
        @last = nil
      end

      # Appends a row if one is due (or +force+); the block gives the
      # values (it may be costly).
      def record(seconds, force: false)
        return if !force && @last && seconds - @last < INTERVAL

        @last = seconds
        values = yield
        File.open(@path, "a") { |file| file.puts [seconds.round(1), *values].join(",") }
      end
    end
  end
end

# frozen_string_literal: true

require_relative "worker"

module Ruzzy
  module Campaign
    # The worker processes a campaign's supervisor runs at once, and what
    # they counted together: the executions of every worker (those that
    # ended and those running), and the coverage, corpus and lines reached
    # of the furthest running one (they share one corpus). Between workers
    # the last known numbers stay: a new worker starts from the same corpus.
    class Workers
      # How many workers were started, the executions of those that ended.
      attr_reader :started, :executions

      # Workers of the campaign whose findings directory is +findings+,
      # writing into +log+, leaving artifacts in +artifacts+/<number>/.
      def initialize(findings:, log:, artifacts:)
        @findings = findings
        @log = log
        @artifacts = artifacts
        @running = {}
        @started = 0
        @executions = 0
      end

      # Starts the next worker, running the command the block returns for
      # its number and its artifacts directory.
      def start
        index = @started
        artifacts = File.join(@artifacts, index.to_s)
        worker = Worker.start(index, yield(index, artifacts), findings: @findings, log: @log, artifacts:)
        @running[worker.io] = worker
        @started += 1
        worker
      end

      def empty?
        @running.empty?
      end

      # Reads what the running workers printed, waiting at most +seconds+;
      # yields [name, kind, title] for each group announced, and returns
      # the workers whose output ended (waited for, counted, logged).
      def follow(seconds, &)
        ready, = IO.select(@running.keys, nil, nil, seconds)
        Array(ready).filter_map do |io|
          worker = @running.fetch(io)
          next if worker.read(&)

          @running.delete(io)
          worker.wait
          @executions += worker.executions
          @log.puts "<== worker #{worker.index}: pid #{worker.pid} #{worker.ended} " \
                    "after #{worker.executions} executions"
          worker
        end
      end

      # Sends +signal+ to every running worker.
      def signal(signal)
        @running.each_value { |worker| worker.signal(signal) }
      end

      # { executions:, coverage:, corpus: } and the lines reached
      # ([lines, edges, all lines] or nil) so far.
      def numbers
        outputs = @running.each_value.map(&:output)
        progress = outputs.filter_map(&:progress)
        @coverage = progress.filter_map(&:coverage).max || @coverage
        @corpus = progress.filter_map(&:corpus).max || @corpus
        reached = outputs.filter_map(&:reached)
        @reached = reached.transpose.map(&:max) unless reached.empty?
        [{ executions: @executions + progress.sum { |each| each.executions.to_i }, coverage: @coverage.to_i,
           corpus: @corpus.to_i }, @reached]
      end
    end
  end
end

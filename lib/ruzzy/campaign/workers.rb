# frozen_string_literal: true

require "set"
require_relative "worker"

module Ruzzy
  module Campaign
    # The worker processes a campaign's supervisor runs at once, and what
    # they counted together: the executions of every worker (those that
    # ended and those running), and the furthest coverage, corpus and lines
    # reached any of them gave, running or ended (they share one corpus, so
    # these never go down; a worker that a finding ends before the next
    # status line still counts).
    class Workers
      # How many workers were started, the executions of those that ended;
      # the corpus directory a fuzz test's worker announced (nil until one
      # did).
      attr_reader :started, :executions, :corpus_dir

      # Workers of the campaign whose findings directory is +findings+,
      # writing into +log+, leaving artifacts in +artifacts+/<number>/.
      def initialize(findings:, log:, artifacts:)
        @findings = findings
        @log = log
        @artifacts = artifacts
        @running = {}
        @started = 0
        @executions = 0
        @ended_notes = []
        @note_kinds = Set.new
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
          @ended_notes.concat(worker.output.notes)
          remember(worker.output)
          worker.output.log("<== worker #{worker.index}: pid #{worker.pid} #{worker.ended} " \
                            "after #{worker.executions} executions\n")
          worker
        end
      end

      # What the workers announced that was not returned before: what the
      # target said when it started (`ruzzy rack`'s routes), once, and the
      # notes they printed (running, or ended since the last call), each
      # kind once (Campaign.note_kind).
      def new_announcements
        target = @target unless @target_returned
        @target_returned ||= !target.nil?
        notes = @ended_notes + @running.each_value.flat_map { |worker| worker.output.notes }
        @ended_notes = []
        fresh = notes.select { |note| @note_kinds.add?(Campaign.note_kind(note)) }
        [*target, *fresh.map { |note| "ruzzy: #{note}" }]
      end

      # Sends +signal+ to every running worker.
      def signal(signal)
        @running.each_value { |worker| worker.signal(signal) }
      end

      # { executions:, coverage:, corpus: } and the lines reached
      # ([lines, edges, all lines] or nil) so far.
      def numbers
        outputs = @running.each_value.map(&:output)
        outputs.each { |output| remember(output) }
        [{ executions: @executions + outputs.sum { |output| output.progress&.executions.to_i },
           coverage: @coverage.to_i, corpus: @corpus.to_i }, @reached]
      end

      private

      # Keeps the furthest coverage, corpus and lines reached so far and
      # those of +output+ (a WorkerOutput).
      def remember(output)
        @coverage = [@coverage, output.progress&.coverage].compact.max
        @corpus = [@corpus, output.progress&.corpus].compact.max
        @reached = [@reached, output.reached].compact.transpose.map(&:max) if output.reached
        @corpus_dir = output.corpus_dir if @corpus_dir.nil?
        @target = output.target if @target.nil?
      end
    end
  end
end

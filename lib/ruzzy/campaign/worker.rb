# frozen_string_literal: true

require "fileutils"
require_relative "../command_options"
require_relative "../campaign_protocol"
require_relative "worker_output"

module Ruzzy
  module Campaign
    # One worker process of a campaign, as its supervisor sees it: its
    # number (in start order), its pid, the pipe its output comes through
    # (standard output and error merged), the WorkerOutput that reads it
    # into the campaign log, and the directory where libFuzzer leaves its
    # artifacts (one per worker: a finding that ends one worker is filed
    # from its own).
    class Worker
      # libFuzzer's flags that would make each worker run processes of its
      # own: in a campaign, the number of workers.
      FLAGS = %w[fork jobs workers].freeze

      # The number of workers: +given+ (--workers), else libFuzzer's
      # -workers, -fork or -jobs among +args+ (LibFuzzerArgs; the first
      # not 0), else CommandOptions.default_workers.
      def self.count(given, args)
        return given if given

        FLAGS.reverse_each do |name|
          value = args.value(name) or next
          count = CommandOptions.worker_count(value, "-#{name}", zero: true)
          return count if count.positive?
        end
        CommandOptions.default_workers
      end

      attr_reader :index, :pid, :io, :output, :artifacts, :status

      # Starts +command+ as worker +index+ of the campaign whose findings
      # directory is +findings+, writing into +log+; +artifacts+ must be
      # the directory its -artifact_prefix names. The log shows the command
      # without it: the directory is gone once the worker's artifacts are
      # filed.
      def self.start(index, command, findings:, log:, artifacts:)
        FileUtils.mkdir_p(artifacts)
        io = IO.popen({ ENV_FINDINGS_DIR => findings }, command, err: %i[child out])
        shown = command.reject { |word| word.start_with?("-artifact_prefix=") }
        log.puts "==> worker #{index}: pid #{io.pid}: #{shown.join(" ")}"
        output = WorkerOutput.new(log, artifacts:, slow_units: File.join(findings, SLOW_UNITS))
        new(index, io, output, artifacts)
      end

      def initialize(index, io, output, artifacts)
        @index = index
        @io = io
        @pid = io.pid
        @output = output
        @artifacts = artifacts
        @status = nil
      end

      # Reads what the worker printed, yielding [name, kind, title] for
      # each new group it announced; returns false once its output ended.
      def read(&)
        chunk = @io.read_nonblock(65_536, exception: false)
        return true if chunk == :wait_readable

        if chunk.nil?
          @output.finish(&)
          return false
        end
        @output.feed(chunk, &)
        true
      end

      # Waits for the process, whose output ended; returns its status.
      def wait
        @io.close
        @status = Process.last_status
      end

      # The worker's own count of executions (the last it printed).
      def executions
        @output.progress&.executions.to_i
      end

      # The exit status, or 128 + the signal that killed it.
      def exit_code
        @status.exitstatus || (128 + @status.termsig.to_i)
      end

      def killed?
        @status.signaled?
      end

      # Sends +signal+ to the worker unless it has ended.
      def signal(signal)
        Process.kill(signal, @pid) unless @status
      rescue SystemCallError
        nil
      end

      # How the process ended, in words.
      def ended
        return "ended with status #{@status.exitstatus}" if @status.exitstatus

        name = Signal.signame(@status.termsig.to_i)
        "was killed by #{name ? "SIG#{name}" : "signal #{@status.termsig}"}"
      end
    end
  end
end

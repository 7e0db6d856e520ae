# frozen_string_literal: true

require "coverage"
require "json"
require "rbconfig"
require_relative "../../web/app_loader"
require_relative "../../own_files"
require_relative "../../user_code"
require_relative "../../native"
require_relative "../../command_options"

module Ruzzy
  module Cov
    # The child side of `ruzzy cov`: loads the harness under Ruby's own line
    # and branch coverage, takes the target it hands to Ruzzy.fuzz, and runs
    # the given inputs through it. After each input it records, in files the
    # parent reads even if this process dies, what happened and the coverage
    # so far (only of paths the filter keeps) with the first input that
    # reached each line. An input that raises is recorded with its
    # exception's class and message (`DONE INDEX raised ["Class", "message"]`).
    class Replayer
      # The longest message recorded for an input that raised.
      MESSAGE_LIMIT = 1000

      # The paths a replay reports: those the include and exclude patterns
      # of +spec+ let fuzzing instrument (the native coverage's own rules),
      # never ruzzy's own files; unless +spec+ says "all", only the user's
      # code (UserCode: the harness's directory, the libraries it requires
      # directly, what --include names).
      def self.filter(spec)
        lambda { |path|
          !path.start_with?(OWN_FILES) && (spec["all"] || UserCode.include?(path)) &&
            Ruzzy::Native._rules_include?(spec["include"], spec["exclude"], path)
        }
      end

      # +spec+: the parent's filter ("include", "exclude", "all").
      def initialize(harness:, inputs:, status:, dump:, spec:)
        @harness = harness
        @inputs = inputs
        @status = status
        @dump = dump
        @spec = spec
        @filter = self.class.filter(spec)
        @first = Hash.new { |hash, path| hash[path] = {} }
      end

      def run
        app = @spec["rack_app"]
        UserCode.watch(app ? Web::AppLoader.root_file(app) : @harness, include: @spec["include"], libraries: !app)
        ::Coverage.start(lines: true, branches: true)
        capture = Ruzzy.session.capture do
          app ? Web::AppLoader.fuzz(app, session: @spec.fetch("session", 1)) : load(@harness)
        end
        raise CLI::UsageError, "#{@harness} did not call Ruzzy.fuzz" unless capture

        Ruzzy.session.clear_stack_poisoning_on_raise
        File.open(@status, "a") do |status|
          status.sync = true
          status.puts "READY"
          @inputs.each_with_index { |(index, path), position| replay(capture, status, index, path, position) }
        end
        0
      end

      private

      def replay(capture, status, index, path, position)
        status.puts "START #{index}"
        outcome = run_one(capture, File.binread(path))
        status.puts "DONE #{index} #{outcome}"
        dump(index)
        progress(position)
      end

      def run_one(capture, data)
        capture.target.call(data)
        "ok"
      rescue Exception => e # rubocop:disable Lint/RescueException -- every failure of the target is recorded
        raise if e.is_a?(Interrupt)

        capture.expected.include?(e) ? "ok" : "raised #{JSON.generate([e.class.to_s, message_of(e)])}"
      end

      # +error+'s message as valid UTF-8 (an input's raw bytes may be in
      # it), at most MESSAGE_LIMIT characters; what its class says when the
      # message cannot be had.
      def message_of(error)
        message = error.message.to_s.dup.force_encoding(Encoding::UTF_8).scrub
        message.size > MESSAGE_LIMIT ? "#{message[0, MESSAGE_LIMIT]}..." : message
      rescue StandardError => e
        "(its #message raised #{e.class})"
      end

      def dump(index)
        result = ::Coverage.peek_result.select { |path, _| @filter.call(path) }
        result.each do |path, data|
          (data[:lines] || []).each_with_index do |count, line|
            @first[path][line + 1] ||= index if count&.positive?
          end
        end
        File.binwrite("#{@dump}.tmp", Marshal.dump({ coverage: result, first: @first.to_a.to_h }))
        File.rename("#{@dump}.tmp", @dump)
      end

      def progress(position)
        now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        return if @last_progress && now - @last_progress < 1 && position + 1 < @inputs.size

        @last_progress = now
        $stderr.print "\rruzzy cov: replayed #{position + 1}/#{@inputs.size} inputs in this process"
        $stderr.puts if position + 1 == @inputs.size
      end
    end
  end
end

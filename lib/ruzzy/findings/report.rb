# frozen_string_literal: true

# Every file of lib/ruzzy/findings/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: campaign_protocol, detectors, error, exit_status, finding_kinds, libfuzzer_args, own_files, settings,
# shown_duration, user_code.

require "shellwords"
require_relative "../error"
require_relative "../shown_duration"
require_relative "../campaign_protocol"
require_relative "input_timeout"
require_relative "store"
require_relative "../finding_kinds"
require_relative "ruby_frames"
require_relative "identity"
require_relative "context"
require_relative "outcome"

module Ruzzy
  module Findings
    # Describes, on standard error, why an input stopped the fuzzer. The native
    # callback calls these methods at most once per process, just before the
    # process ends (an abort handled by libFuzzer for a finding, a plain exit for
    # a broken harness), and asks ignored? for every exception the target raises
    # when some are expected. What it needs of the run (the findings
    # directory, the expected exceptions, where artifacts go, the hang
    # watch) is Findings.context, handed over once as fuzzing starts.
    module Report
      # Frames of the token that identifies a finding.
      DEDUP_FRAMES = Outcome::DEDUP_FRAMES

      module_function

      # The fuzz target raised +error+ on +input+. libFuzzer writes the crash
      # file next. Returns the exception's frames in sanitizer form
      # (RubyFrames.sanitizer_frames), which the native side prints after libFuzzer's own
      # crash line.
      #
      # In a campaign (`ruzzy --keep-going`) the finding is recorded in the
      # findings directory instead and nil is returned: fuzzing goes on.
      def report_exception(error, input = nil)
        return record_hang(error, input) if error.is_a?(InputTimeout) && input

        text, outcome = describe(error, input)
        store = Findings.context.store
        return record(store, outcome, text) if store && input

        text << reproduction(input) if input
        $stderr.write(text)
        $stderr.flush
        error.is_a?(Exception) ? RubyFrames.sanitizer_frames(error.backtrace || []) : ""
      end

      # The report of +error+ raised on +input+ (nil: none), without the
      # commands that reproduce it, and its Outcome, built from the same
      # parts.
      def describe(error, input)
        exceptions = exception_parts(error)
        token = Error.text(dedup_token(error)) if error.is_a?(Exception)
        description = input ? Error.text(describe_input(input, error)) : ""
        text = describe_exception(error, exceptions)
        text << "DEDUP_TOKEN: #{token}\n" if token
        text << description
        [text, Outcome.of(error, input, token:, exceptions:, description:)]
      end

      # Files +outcome+, a finding of a campaign reported as +text+; prints
      # the report of a group's first finding only.
      def record(store, outcome, text)
        identity = outcome.identity
        if store.record(identity, outcome.input, text) == :new
          # The announcement is a line of its own, whatever the report's
          # last line (an input description may lack its newline).
          $stderr.write(text, text.end_with?("\n") ? "" : "\n",
                        Campaign.new_group_line(identity.group, identity.kind, identity.title))
          $stderr.flush
        end
        nil
      end

      # A campaign's hang watch stopped a hang in Ruby code (+error+, an
      # InputTimeout). It ran for less than the campaign's hang threshold,
      # so it is a suspect, not a finding (Findings::Suspects): the
      # supervisor runs it alone with the threshold, and files it only if it
      # runs over. Its group (named by the frames the hang stayed in, those
      # of its loop, as libFuzzer's timeout names it) is a hang's until
      # then: the watch learns it (Context#hang_watch), and stops later
      # inputs in that loop sooner. Its report is printed with the first
      # suspect of its group this worker keeps.
      #
      # Its group is read from its report's frames, in sanitizer form: the
      # rule that names a hang libFuzzer's timeout reports in another
      # process (Identity.of_report), so that both name it alike.
      def record_hang(error, input)
        text = hang_report(error.seconds, error.loop_frames, error.backtrace || [], known: error.known)
        group = Identity.of_report(text).group
        run = Findings.context
        run.hang_watch.learn([group])
        if run.store.suspects.offer(group, input, error.seconds)
          $stderr.write(text, "==ruzzy== suspected hang #{group} (#{input.bytesize} bytes): " \
                              "it is filed only if it runs over the hang threshold alone\n")
          $stderr.flush
        end
        nil
      end

      # The report of a hang stopped in Ruby code after +seconds+, which
      # stayed in +loop_frames+ (or nil; +known+: those of a hang found
      # before) and was stopped at +stopped_at+.
      def hang_report(seconds, loop_frames, stopped_at, known: false)
        text = +"==#{Process.pid}== #{KINDS[:timeout].error_line} after #{seconds} seconds " \
                "(#{"in the loop of a hang found before; " if known}stopped in Ruby code; fuzzing goes on)\n"
        text << hang_frames(loop_frames, stopped_at)
      end

      # The group (Identity#group) a hang that stayed in +loop_frames+ is
      # filed in.
      def hang_group(loop_frames)
        Identity.of_report(hang_report(0, loop_frames, loop_frames)).group
      end

      # Writes a campaign's unwritten counts (the process is ending).
      def flush
        Findings.context.store&.flush
      end

      # The running target's Ruby backtrace as Ruby prints one ("\tfrom
      # path:line:in 'label'", innermost last), without the harness's
      # start-up and ruzzy's own frames (a timeout, at Ruby's safe point).
      def current_backtrace = RubyFrames.target_frames(caller).reverse.map { |frame| "\tfrom #{frame}\n" }.join

      # The running target's frames in the same form (those of the hang's
      # loop first, when the run's hang watch followed it), and the timeout's
      # identity as a DEDUP_TOKEN line (a timeout, reported at Ruby's next
      # safe point).
      def current_frames
        frames = hang_frames(Findings.context.hang_watch.loop_frames, caller)
        "#{frames}DEDUP_TOKEN: #{Identity.frames(frames).first(DEDUP_FRAMES).join("--")}\n"
      end

      # Asked at Ruby's safe point after libFuzzer's alarm, before the
      # timeout is reported: whether the hang's frames can be named (the
      # run's hang watch says, Context#hang_watch); the report waits for the
      # next alarm when not.
      def hang_followed? = Findings.context.hang_watch.ready_to_name?

      # Frames of where a hang was stopped that its report shows.
      STOPPED_FRAMES = 6

      # The frames of a hang in sanitizer form (RubyFrames): those of its
      # loop (+loop_frames+, as the hang watch followed it), or (when they
      # are not known) those of +stopped_at+ (a Ruby backtrace), each method
      # once, at its outermost call; then, when they differ, the innermost
      # frames it was stopped at.
      def hang_frames(loop_frames, stopped_at)
        frames = RubyFrames.without_recursion(RubyFrames.target_frames(loop_frames || stopped_at))
        text = RubyFrames.sanitizer_frames(frames)
        return text if loop_frames.nil? || loop_frames == stopped_at

        text << "==ruzzy== the hang stayed in the frames above; it was stopped at (innermost first):\n"
        text << RubyFrames.target_frames(stopped_at).first(STOPPED_FRAMES).map { |frame| "    at #{frame}\n" }.join
      end

      # Whether +error+ is one the harness expects (Ruzzy.fuzz's ignore:).
      def ignored?(error)
        error.is_a?(Exception) && Findings.context.expected.include?(error)
      end

      # The fuzz target returned +value+, which is not nil, 0 or -1.
      def report_bad_return(value)
        $stderr.write(
          "==#{Process.pid}== ERROR: ruzzy: TypeError: the fuzz target did not return an integer or nil: " \
          "it returned #{safe_inspect(value)} (#{value.class}). Return nil or 0 to keep going, -1 (or any " \
          "other Integer) to reject the input; end the block with `nil` if its value does not matter.\n"
        )
        $stderr.flush
      end

      # An input that ran +seconds+ (the faster of its two runs), far longer
      # than the median input (+median+ seconds): not a crash, but often a
      # denial of service in the making. Kept as slow-unit-<sha1> (where
      # libFuzzer keeps its own slow units) so it can be replayed; fuzzing
      # goes on.
      def report_slow_input(input, seconds, median)
        require "digest/sha1"
        path = Findings.context.artifact_path(:slow_unit, Digest::SHA1.hexdigest(input))
        File.binwrite(path, input)
        $stderr.write("==#{Process.pid}== ruzzy: slow input: #{ShownDuration.of(seconds)}, the faster of two runs, " \
                      "#{(seconds / median).round}x the median input (#{ShownDuration.of(median)}); " \
                      "written to #{path}\n" \
                      "==ruzzy== Reproduce: #{Findings.context.command_line} #{path.shellescape}\n")
        $stderr.flush
      end

      # The custom +name+ (mutator, crossover) +what+ (raised, returned a
      # non-String) +value+: a harness bug, not a finding.
      def report_harness_error(name, what, value)
        detail = value.is_a?(Exception) ? describe_exception(value) : "#{safe_inspect(value)} (#{value.class})\n"
        $stderr.write("==#{Process.pid}== ERROR: ruzzy: the custom #{name} #{what}; " \
                      "it must return the new input as a String.\n#{detail}")
        $stderr.flush
      end

      # The report of +error+ up to its DEDUP_TOKEN line: its headline,
      # then +exceptions+ (exception_parts).
      def describe_exception(error, exceptions = exception_parts(error))
        unless error.is_a?(Exception)
          return +"==#{Process.pid}== ERROR: ruzzy: the fuzz target left with a non-local exit " \
                  "(#{safe_inspect(error)})\n"
        end

        text = +"==#{Process.pid}== ERROR: ruzzy: #{headline(error)}\n"
        exceptions.each_with_index do |(heading, frames), depth|
          text << "Caused by: " if depth.positive?
          text << "#{heading}\n"
          frames.each { |frame| text << "    from #{frame}\n" }
        end
        text
      end

      # +error+ and its causes, outermost first, each as ["Class: message",
      # the target's frames ("path:line:in 'label'", innermost first)], as
      # reports show them.
      def exception_parts(error)
        chain(error).map do |exception|
          ["#{Error.class_name(exception)}: #{Error.safe_message(exception)}",
           RubyFrames.target_frames(exception.backtrace || []).map { |frame| Error.text(frame) }]
        end
      end

      # What the context's input_description says of +input+, which raised
      # +error+, or ""; never raises.
      def describe_input(input, error)
        Findings.context.input_description&.call(input, error).to_s
      rescue StandardError => e
        "ruzzy: could not describe the input: #{e.class}: #{e.message}\n"
      end

      # What kind of finding +error+ is.
      def headline(error)
        return "uncaught Ruby exception in the fuzz target" unless Outcome.detector?(error)

        "bug detector #{error.detector} fired in the fuzz target at #{error.sink} " \
          "(--disable-detectors=#{error.detector} to turn it off)"
      end

      # Identifies a finding across runs and inputs (Outcome.dedup_token).
      def dedup_token(error) = Outcome.dedup_token(error)

      # The commands that reproduce and minimise the finding: with the input
      # file given on the command line, or else the crash file libFuzzer
      # writes next (written here when the engine does not).
      def reproduction(input)
        require "digest/sha1"
        run = Findings.context
        given = run.input_file(input)
        artifact = given || run.artifact_path(:crash, Digest::SHA1.hexdigest(input))
        text = given ? +"" : run.save_artifact(artifact, input)
        text << "==ruzzy== Reproduce: #{run.command_line} #{artifact.shellescape}\n" \
                "==ruzzy== Minimise:  #{run.minimise_command_line} -minimize_crash=1 -runs=100000 " \
                "#{artifact.shellescape}\n"
      end

      # +error+ and its causes, outermost first, without cycles.
      def chain(error)
        seen = []
        while error.is_a?(Exception) && !seen.include?(error)
          seen << error
          error = error.cause
        end
        seen
      end

      def safe_inspect(value)
        text = value.inspect
        text.length > 200 ? "#{text[0, 200]}..." : text
      rescue Exception => e # rubocop:disable Lint/RescueException -- any failure here must not hide the finding
        "#<#{value.class} (#inspect raised #{e.class})>"
      end
    end
  end
end

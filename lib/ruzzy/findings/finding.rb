# frozen_string_literal: true

require "shellwords"
require_relative "../error"
require_relative "../own_files"
require_relative "../shown_duration"
require_relative "../campaign/protocol"
require_relative "../campaign/hang_watch"
require_relative "store"
require_relative "kinds"
require_relative "bug_shape"

module Ruzzy
  # Describes, on standard error, why an input stopped the fuzzer. The native
  # callback calls these methods at most once per process, just before the
  # process ends (an abort handled by libFuzzer for a finding, a plain exit for
  # a broken harness), and asks ignored? for every exception the target raises
  # when some are expected.
  module Finding
    # Frames of the token that identifies a finding.
    DEDUP_FRAMES = 3

    module_function

    # The fuzz target raised +error+ on +input+. libFuzzer writes the crash
    # file next. Returns the exception's frames in sanitizer form
    # (sanitizer_frames), which the native side prints after libFuzzer's own
    # crash line.
    #
    # In a campaign (`ruzzy --keep-going`) the finding is recorded in the
    # findings directory instead and nil is returned: fuzzing goes on.
    def report_exception(error, input = nil)
      return record_hang(error, input) if error.is_a?(Campaign::HangWatch::InputTimeout) && input

      text = describe_exception(error)
      text << "DEDUP_TOKEN: #{dedup_token(error)}\n" if error.is_a?(Exception)
      store = Ruzzy.session.findings
      return record(store, text, input) if store && input

      text << reproduction(input) if input
      $stderr.write(text)
      $stderr.flush
      error.is_a?(Exception) ? sanitizer_frames(error.backtrace || []) : ""
    end

    # Files a finding of a campaign; prints the report of a group's first
    # finding only.
    def record(store, text, input)
      identity = Findings::Identity.of_report(text)
      if store.record(identity, input, text) == :new
        $stderr.write(text, Campaign.new_group_line(identity))
        $stderr.flush
      end
      nil
    end

    # A campaign's hang watch stopped a hang in Ruby code: reported in
    # libFuzzer's words with the frames the hang stayed in (those of its
    # loop, see Campaign::HangTrace), so that it is one group with the
    # hangs libFuzzer's timeout ends, then the frames where it was stopped.
    # Later hangs are given less time.
    def record_hang(error, input)
      text = +"==#{Process.pid}== #{Findings::KINDS[:timeout].error_line} after #{error.seconds} seconds " \
              "(stopped in Ruby code; fuzzing goes on)\n"
      text << hang_frames(error.loop_frames, error.backtrace || [])
      Campaign::HangWatch.shorten
      record(Ruzzy.session.findings, text, input)
    end

    # Writes a campaign's unwritten counts (the process is ending).
    def flush
      Ruzzy.session.findings&.flush
    end

    # Frames printed in sanitizer form.
    CRASH_FRAMES = 32

    # The running target's Ruby backtrace as Ruby prints one ("\tfrom
    # path:line:in 'label'", innermost last), without the harness's
    # start-up and ruzzy's own frames (a timeout, at Ruby's safe point).
    def current_backtrace = target_frames(caller).reverse.map { |frame| "\tfrom #{frame}\n" }.join

    # The running target's frames in the same form (those of the hang's
    # loop first, when the hang watch followed it), and the timeout's
    # identity as a DEDUP_TOKEN line (a timeout, reported at Ruby's next
    # safe point).
    def current_frames
      frames = hang_frames(Campaign::HangWatch.loop_frames, caller)
      "#{frames}DEDUP_TOKEN: #{Findings::Identity.frames(frames).first(DEDUP_FRAMES).join("--")}\n"
    end

    # Frames of where a hang was stopped that its report shows.
    STOPPED_FRAMES = 6

    # The frames of a hang in sanitizer form (sanitizer_frames): those of
    # its loop (Campaign::HangTrace#finish), or (when they are not known)
    # those of +stopped_at+ (a Ruby backtrace), each method once, at its
    # outermost call (without_recursion); then, when they differ, the
    # innermost frames it was stopped at.
    def hang_frames(loop_frames, stopped_at)
      text = sanitizer_frames(without_recursion(target_frames(loop_frames || stopped_at)))
      return text if loop_frames.nil? || loop_frames == stopped_at

      text << "==ruzzy== the hang stayed in the frames above; it was stopped at (innermost first):\n"
      text << target_frames(stopped_at).first(STOPPED_FRAMES).map { |frame| "    at #{frame}\n" }.join
    end

    # +frames+ (innermost first) with each method (file:method) only at its
    # outermost call: a hang deep in a recursion is named and shown the same
    # at whatever depth it was stopped (an exponential recursion's depth
    # varies from moment to moment), and the harness's frames are never
    # pushed out of the frames shown.
    def without_recursion(frames)
      frames.reverse.uniq { |frame| normalize_frame(frame) }.reverse
    end

    # The innermost frames of +backtrace+ (Ruby's "path:line:in 'label'"
    # strings) as a sanitizer prints a stack trace ("    #0 0x0 in LABEL
    # PATH:LINE"), for tools that group crashes by their top frames
    # (ClusterFuzz's stack parser reads the frames that follow libFuzzer's
    # "deadly signal" line). A Ruby frame has no machine address: 0x0
    # stands in. The function is one word, as a C symbol
    # would be: ClusterFuzz keeps a frame's name up to the first space,
    # "(" or "[" and after the last "!", so those are percent-encoded
    # ("save%21"); "block in" decorations are dropped.
    def sanitizer_frames(backtrace)
      target_frames(backtrace).first(CRASH_FRAMES).each_with_index.map do |frame, index|
        path, line, label = frame.match(/\A(.*?):(\d+):in (.*)\z/)&.captures
        name = method_label(label).gsub(/[\s!()\[\]%]/) { |char| format("%%%02X", char.ord) }
        "    ##{index} 0x0 in #{name.empty? ? "<unknown>" : name} #{path || frame}:#{line || 0}\n"
      end.join
    end

    # Whether +error+ is one the harness expects (Ruzzy.fuzz's ignore:).
    def ignored?(error)
      error.is_a?(Exception) && Ruzzy.session.expected_exceptions.include?(error)
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

    # An input that ran +seconds+, far longer than the median input
    # (+median+ seconds): not a crash, but often a denial of service in the
    # making. Kept as slow-unit-<sha1> (where libFuzzer keeps its own slow
    # units) so it can be replayed; fuzzing goes on.
    def report_slow_input(input, seconds, median)
      require "digest/sha1"
      path = Ruzzy.session.artifact_path(:slow_unit, Digest::SHA1.hexdigest(input))
      File.binwrite(path, input)
      $stderr.write("==#{Process.pid}== ruzzy: slow input: #{ShownDuration.of(seconds)}, " \
                    "#{(seconds / median).round}x the median input (#{ShownDuration.of(median)}); " \
                    "written to #{path}\n" \
                    "==ruzzy== Reproduce: #{Ruzzy.session.command_line} #{path.shellescape}\n")
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

    def describe_exception(error)
      unless error.is_a?(Exception)
        return +"==#{Process.pid}== ERROR: ruzzy: the fuzz target left with a non-local exit " \
                "(#{safe_inspect(error)})\n"
      end

      text = +"==#{Process.pid}== ERROR: ruzzy: #{headline(error)}\n"
      chain(error).each_with_index do |exception, depth|
        text << "Caused by: " if depth.positive?
        text << "#{Error.class_name(exception)}: #{Error.safe_message(exception)}\n"
        target_frames(exception.backtrace || []).each { |frame| text << "    from #{frame}\n" }
      end
      text
    end

    # What kind of finding +error+ is.
    def headline(error)
      unless defined?(Detectors::Report) && error.is_a?(Detectors::Report)
        return "uncaught Ruby exception in the fuzz target"
      end

      "bug detector #{error.detector} fired in the fuzz target at #{error.sink} " \
        "(--disable-detectors=#{error.detector} to turn it off)"
    end

    # Identifies a finding across runs and inputs: the exception class and
    # its innermost frames as file:method, without line numbers (which move
    # with every edit) or Ruby's "block in" decorations; a stack overflow
    # and a failed test assertion by what Findings::BugShape.parts says.
    def dedup_token(error)
      frames = target_frames(error.backtrace || []).reject { |frame| frame.start_with?("<internal:") }
      parts = Findings::BugShape.parts(error, frames, method(:normalize_frame)) ||
              frames.first(DEDUP_FRAMES).map { |frame| normalize_frame(frame) }
      [error.class.name || "AnonymousException", *parts].join("--")
    end

    # A backtrace label: `name' (Ruby 3.1, 3.3) or 'Owner#name' (3.4).
    LABEL_QUOTES = /\A[`']|'\z/
    # The owner Ruby 3.4 puts before a method name ("Hello.", "Kernel#").
    LABEL_OWNER = /\A(?:[A-Z][\w:]*|#<[^>]*>)[#.]/
    private_constant :LABEL_QUOTES, :LABEL_OWNER

    # file:method of a frame, the same on every Ruby version.
    def normalize_frame(frame)
      path, label = frame.split(/:\d+:in /, 2)
      "#{File.basename(path.to_s)}:#{method_name(label)}"
    end

    # The method a backtrace label names, without the owner Ruby 3.4 adds:
    # the same on every Ruby version.
    def method_name(label)
      method_label(label).sub(LABEL_OWNER, "")
    end

    # The method a backtrace label names, without quotes or Ruby's "block
    # in" decorations; the top level of any file is <top>.
    def method_label(label)
      label = label.to_s.gsub(LABEL_QUOTES, "").sub(/\A(?:(?:block|rescue|ensure)(?: \(\d+ levels\))? in )+/, "")
      ["<main>", "<top (required)>"].include?(label) ? "<top>" : label
    end

    # The commands that reproduce and minimise the finding: with the input
    # file given on the command line, or else the crash file libFuzzer
    # writes next (written here when the engine does not).
    def reproduction(input)
      require "digest/sha1"
      given = Ruzzy.session.input_file(input)
      artifact = given || Ruzzy.session.artifact_path(:crash, Digest::SHA1.hexdigest(input))
      command = Ruzzy.session.command_line
      text = given ? +"" : Ruzzy.session.save_artifact(artifact, input)
      text << "==ruzzy== Reproduce: #{command} #{artifact.shellescape}\n" \
              "==ruzzy== Minimise:  #{Ruzzy.session.minimise_command_line} -minimize_crash=1 -runs=100000 " \
              "#{artifact.shellescape}\n"
    end

    # The frames of +backtrace+ above the fuzzing machinery: everything from
    # ruzzy's own `_fuzz` frame down is the harness's start-up, the same for
    # every finding, and is left out, as are ruzzy's own frames (the fuzz
    # test wrapper), unless the target is all ruzzy's own (Ruzzy.dummy).
    # The native side (ext/ruzzy/src/findings/ruby_backtrace.rs) applies
    # the same rule to frames read in a signal handler.
    def target_frames(backtrace)
      above = backtrace.first(backtrace.index { _1.match?(/in [`'](?:Ruzzy::Native\.)?_fuzz'\z/) } || backtrace.size)
      above.reject { |frame| frame.start_with?(OWN_FILES) }.then { |yours| yours.empty? ? above : yours }
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

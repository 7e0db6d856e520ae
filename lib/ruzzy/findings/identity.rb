# frozen_string_literal: true

require "digest/sha1"
require_relative "../own_files"
require_relative "bug_shape"
require_relative "ruby_frames"
require_relative "../finding_kinds"

module Ruzzy
  module Findings
    # A finding's kind, token and title, and where a Ruby exception (a bug
    # detector's too) was raised in the user's code (file:line; nil for
    # other kinds, which name their frames in their title). The site tells
    # apart groups whose titles read the same (Campaign::Display.table); it
    # is not part of the token (lines move with every edit), except in a
    # failed assertion's, which names its call site (BugShape).
    Identity = Struct.new(:kind, :token, :title, :site)

    # What makes two findings the same bug: the kind of report and the
    # innermost frames of the code that failed, without line numbers (which
    # move with every edit; a failed test assertion alone is named by its
    # call site's line, see BugShape). Read from a report as ruzzy,
    # libFuzzer and the sanitizers print it, so a finding that ended the
    # process (a sanitizer report, a segfault, a timeout, running out of
    # memory) is grouped like a Ruby exception that did not. The process
    # that caught a Ruby exception names it from its Outcome instead, by
    # the same rules (title, site), without reading its report back.
    class Identity
      # The group's directory name: the kind and a hash of the token.
      def group
        "#{kind}-#{Digest::SHA1.hexdigest(token)[0, 10]}"
      end

      # Frames that make up a token.
      FRAMES = 3

      # Kinds whose native stack is the one a signal interrupted, printed
      # by a sanitizer preload with its DEDUP_TOKEN (token_frames).
      INTERRUPTED_STACK_KINDS = GROUP_KINDS.values_at(:timeout, :signal).freeze

      # Frames of the sanitizer runtimes, libFuzzer and libc's entry points,
      # and the procedure linkage table stubs a signal may interrupt (no
      # symbol of their own: named after the object's _init or _fini):
      # never the code that has the bug.
      RUNTIME_FRAME = /\A(?:_*(?:asan|ubsan|lsan|sanitizer|interceptor|interceptor_trampoline)_|
                          __libc_|fuzzer::|(?:_start|main|malloc|calloc|realloc|free|_init|_fini)\z)/x

      # The kind of a failure of ruzzy itself or of a sanitizer runtime, not
      # of the fuzz target: a sanitizer's own check failing (AddressSanitizer
      # describing stack memory whose frame is long gone: "CHECK failed:
      # asan_thread.cpp:370"), a sanitizer report that failed while it was
      # printed ("nested bug"), a panic in ruzzy's native code. Titled by
      # that line; it names no frames of the target's.
      INTERNAL = GROUP_KINDS.fetch(:internal)
      # The kinds of ruzzy's own reports of a Ruby exception, named by its
      # DEDUP_TOKEN line (ruby_exception).
      RUBY_EXCEPTION_KINDS = GROUP_KINDS.values_at(:exception, :detector).freeze

      # Report kinds, recognised by their headline, with the kind's name and
      # a title prefix; the first that matches wins. Those of the kinds
      # saved as artifacts (a deadly signal, a timeout...) come from KINDS,
      # titled by the reporter's name unless it is libFuzzer.
      HEADLINES = [
        # ruzzy's or a sanitizer runtime's own failure (INTERNAL_ERRORS).
        [/\b(\w*Sanitizer: CHECK failed: \S+ ".*?")(?: \(0x\h+, 0x\h+\))?(?: \(tid=\d+\))?$/, INTERNAL, nil],
        [/\b(\w*Sanitizer: nested bug in the same thread)/, INTERNAL, nil],
        [/==ruzzy== ERROR: (internal error in ruzzy's native code) \(a Rust panic/, INTERNAL, "ruzzy"],
        [/ERROR: ruzzy: bug detector (\S+) fired/, GROUP_KINDS.fetch(:detector), nil],
        [/ERROR: ruzzy: uncaught Ruby exception/, GROUP_KINDS.fetch(:exception), nil],
        [/ERROR: ruzzy: the fuzz target left with a non-local exit/, GROUP_KINDS.fetch(:exception), nil],
        [/ERROR: AddressSanitizer: ([^\s:]+)/, GROUP_KINDS.fetch(:asan), "AddressSanitizer"],
        [/runtime error: (.+)/, GROUP_KINDS.fetch(:ubsan), "UndefinedBehaviorSanitizer"],
        *KINDS.values.select(&:headline).map do |kind|
          [kind.headline_pattern, kind.group, (kind.reporter unless kind.reporter == "libFuzzer")]
        end,
        [/ERROR: libFuzzer: (fuzz target exited)/, GROUP_KINDS.fetch(:exit), nil],
        [/ERROR: (?:libFuzzer|ruzzy): (.+)/, GROUP_KINDS.fetch(:crash), nil]
      ].freeze
      private_constant :HEADLINES, :INTERNAL

      # The identity of a finding reported as +text+ (one report: from its
      # first line to the end of libFuzzer's summary).
      def self.of_report(text)
        text = text.scrub
        kind, detail, prefix, at = headline(text)
        return no_report unless kind

        rest = text[at..]
        return internal_error(detail, prefix, rest) if kind == INTERNAL
        return ruby_exception(kind, rest) if RUBY_EXCEPTION_KINDS.include?(kind)

        native_report(kind, detail, prefix, text, rest)
      end

      # The identity of a report of a +kind+ that names native frames (a
      # sanitizer's, libFuzzer's), whose headline says +detail+, from its
      # +text+ and the +rest+ of it from the headline on.
      def self.native_report(kind, detail, prefix, text, rest)
        ubsan = kind == GROUP_KINDS.fetch(:ubsan)
        frames = native_frames(rest, ubsan ? text : nil)
        frames = token_frames(frames, rest) if INTERRUPTED_STACK_KINDS.include?(kind)
        frames = native_frames(ruby_backtrace(text), nil) if frames.empty?
        cycle = BugShape.cycle(frames.first(BugShape::CYCLE_SPAN)) if detail == "stack-overflow"
        what = ubsan ? detail.gsub(/-?\d+/, "N").sub(/ in type .*/, "") : detail
        title = [prefix, what].compact.join(": ")
        # A stack overflow is named by all the frames of its recursion, in
        # a canonical rotation (it overflows anywhere in the cycle).
        frames = cycle || frames.first(FRAMES)
        unless frames.empty?
          title += " in #{frames.first(2).map do |frame|
                            frame.sub(/@(.*)\z/, ' (\\1)')
                          end.join(" < ")}"
        end
        Identity.new(kind, [kind, what, *frames].join("--"), title)
      end
      private_class_method :native_report

      # The identity of a process that ended without a report.
      def self.no_report
        crash = GROUP_KINDS.fetch(:crash)
        Identity.new(crash, crash, "the process ended without a report")
      end
      private_class_method :no_report

      # The frames of +frames+ (native, "name@file") that the stack's own
      # DEDUP_TOKEN line in +text+ names, when a sanitizer preload printed
      # one after the native stack of the frame a signal interrupted (a
      # hang or a crash in C code): the preload leaves the runtime out of it
      # by address (libc, the interpreter, ruzzy's extension), which a
      # frame's printed name and file cannot tell (libc's clock_gettime,
      # built with debug information, reads like the extension's code). So
      # a loop interrupted now in libc, now in its own code, is one group,
      # named by one rule here and in the token. +frames+ as they are when
      # there is no such token (a Ruby frames' token names "method@file").
      def self.token_frames(frames, text)
        token = text[/^DEDUP_TOKEN: (.+)$/, 1]
        return frames if token.nil? || token.include?("@")

        names = token.split("--")
        named = frames.select { |frame| names.include?(frame.sub(/@[^@]*\z/, "")) }
        named.empty? ? frames : named
      end
      private_class_method :token_frames

      # The kind, headline detail, title prefix and offset of the first
      # headline in +text+.
      def self.headline(text)
        HEADLINES.filter_map do |pattern, kind, prefix|
          match = pattern.match(text)
          [kind, match[1], prefix, match.begin(0)] if match
        end.min_by(&:last)
      end
      private_class_method :headline

      # The identity of an internal error whose headline (in +text+) says
      # +detail+: the line itself, and where a panic was.
      def self.internal_error(detail, prefix, text)
        title = [prefix, detail].compact.join(": ")
        panic_at = text[/\A.*?a Rust panic at (\S+:\d+)/, 1] if prefix
        title += " (a Rust panic at #{panic_at})" if panic_at
        Identity.new(INTERNAL, "#{INTERNAL}--#{title}", title)
      end
      private_class_method :internal_error

      # A Ruby exception's identity read back from ruzzy's report +text+
      # (from its headline on), as another process printed it (a replay's,
      # a worker's that ended): its DEDUP_TOKEN line, the line after the
      # headline ("Class: message") and its "    from" frames. The process
      # that caught the exception does not read its report: it has its
      # Outcome (outcome.rb), named by the same rules (title, site).
      def self.ruby_exception(kind, text)
        token = text[/^DEDUP_TOKEN: (.+)$/, 1] || "unknown"
        frames = text.scan(/^    from (.+:\d+:in .*)$/).flatten
        Identity.new(kind, "#{kind}--#{token}", title(text.lines[1], token), site(frames, token))
      end
      private_class_method :ruby_exception

      # A Ruby exception's title: +line+, the line after its report's
      # headline ("Class: message"), shortened; its DEDUP_TOKEN +token+ when
      # there is none (a non-local exit).
      def self.title(line, token)
        message = line.to_s.strip
        message.empty? ? token : truncate(message)
      end

      # A frame of a Ruby backtrace: its path and line.
      FRAME = /\A(.+?):(\d+):in /
      private_constant :FRAME

      # Where a Ruby exception with the DEDUP_TOKEN +token+ was raised, as
      # file:line (the base name of the file), or nil: the first of +frames+
      # (those its report shows, "path:line:in 'label'", of the exception
      # and its causes) that its token names, or else its first frame that
      # is neither ruzzy's own nor Ruby's (<internal:...>). A failed
      # assertion raises inside its test framework: its site is the call
      # site its token names (BugShape), found where the framework was
      # loaded; the process reading a report (a supervisor, `ruzzy findings
      # minimise`) may not have it loaded to tell its frames from the user's.
      def self.site(frames, token)
        error_class, call_site = token.split("--")
        return call_site if BugShape::ASSERTIONS.include?(error_class) && call_site&.match?(/:\d+\z/)

        located = frames.filter_map { |frame| (found = frame.match(FRAME)) && [frame, found[1], found[2]] }
        # A bug detector's token starts at the user's frame that made the
        # dangerous call (Report.caller_frames): its site is that frame.
        named = located.find { |frame, _, _| RubyFrames.token_name(frame) == call_site } if call_site
        _, path, line = named || located.find { |_, file, _| !file.start_with?(OWN_FILES, "<internal:") }
        "#{File.basename(path)}:#{line}" if path
      end

      # The frames of the first stack trace in +text+ that make identities
      # ("name@file"), innermost first.
      def self.frames(text)
        native_frames(text, nil)
      end

      # The fuzz target's frames, in sanitizer form, of the Ruby backtrace
      # ruzzy prints ("\tfrom path:line:in 'label'", innermost last) when
      # there are no native frames to read: a segfault or a hang in C code
      # without a sanitizer. Each method once, at its outermost call, as
      # Report.hang_frames names a hang in Ruby code.
      def self.ruby_backtrace(text)
        backtrace = text.scan(/^\tfrom (.+:\d+:in .+)$/).flatten.reverse
        target = backtrace.take_while { |frame| !frame.start_with?(OWN_FILES) }
        RubyFrames.sanitizer_frames(RubyFrames.without_recursion(target))
      end
      private_class_method :ruby_backtrace

      # Function (or Ruby method) names of the first stack trace in +text+
      # ("    #0 0x55 in name file:line"), the runtime's own frames left out,
      # each with its file's base name. A UBSan report has no stack trace by
      # default: its "file:line:col: runtime error" location stands in.
      def self.native_frames(text, ubsan_text)
        frames = first_stack(text).reject { |name, _, line| name.match?(RUNTIME_FRAME) || interpreter_frame?(line) }
        frames = without_ruby_builtins(frames).map { |name, location, _| "#{name}@#{File.basename(location)}" }
        return frames unless frames.empty? && ubsan_text

        location = ubsan_text[/(\S+?):\d+:\d+: runtime error/, 1]
        location ? [File.basename(location)] : []
      end
      private_class_method :native_frames

      # [name, location without line and column, line] of each frame of
      # the first stack trace in +text+.
      def self.first_stack(text)
        frames = []
        text.each_line do |line|
          match = line.match(/\A\s*#(\d+) (0x\h+) in (\S+)(?: (\S+))?/)
          break if match.nil? && !frames.empty? && line.strip.empty?
          next unless match
          break if match[1] == "0" && !frames.empty?

          frames << [match[3], match[4].to_s, line]
        end
        frames
      end
      private_class_method :first_stack

      # Ruby frames (address 0x0, as ruzzy prints them) are named without
      # the owner Ruby 3.4 adds (the same group on every Ruby); those of
      # Ruby's own methods are left out, so that a hang is one group
      # wherever the timeout caught it: those written in Ruby are in "<internal:...>"
      # (Kernel#loop from Ruby 3.3 on), those written in C carry their
      # caller's file and line (String#hash).
      def self.without_ruby_builtins(frames)
        frames = frames.reject { |_, location, line| line.include?(" 0x0 in ") && location.start_with?("<internal:") }
        kept = frames.each_with_index.reject do |(_, location, line), index|
          line.include?(" 0x0 in ") && frames[index + 1] && frames[index + 1][1] == location
        end
        kept.map do |(name, location, line), _|
          name = RubyFrames.method_name(name) if line.include?(" 0x0 in ")
          [name, location.sub(/:\d+(?::\d+)?\z/, ""), line]
        end
      end
      private_class_method :without_ruby_builtins

      # A frame of the Ruby interpreter, of an inline function of its
      # headers (ruby_nonempty_memcpy), or of ruzzy's extension: the same in
      # every finding, never the bug.
      def self.interpreter_frame?(line)
        line.include?("libruby") || line.match?(%r{ in ruzzy::|ruzzy_ext\.so|/include/ruby-[\d.]+/})
      end
      private_class_method :interpreter_frame?

      def self.truncate(text)
        text.length > 120 ? "#{text[0, 117]}..." : text
      end
      private_class_method :truncate
    end
  end
end

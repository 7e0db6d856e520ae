# frozen_string_literal: true

require_relative "identity"
require_relative "bug_shape"
require_relative "ruby_frames"
require_relative "../finding_kinds"
require_relative "../user_code"

module Ruzzy
  module Findings
    # What the fuzz target did with one input when a Ruby exception (a bug
    # detector's too) escaped it: built once, where Report catches it, and
    # handed down to what files it (Store, through #identity). Its report
    # is printed from the same parts, never read back: the grouping of a
    # finding does not depend on how its message happens to read.
    #
    # +kind+: GROUP_KINDS' exception or detector.
    # +token+: its DEDUP_TOKEN (Outcome.dedup_token, as the report prints
    # it; "unknown" for a non-local exit, which has none).
    # +title+: what a person reads first ("ArgumentError: bad header").
    # +frames+: the frames its report shows ("path:line:in 'label'",
    # innermost first), of the exception and then of its causes.
    # +site+: where it was raised in the user's code ("file.rb:12"), or nil.
    # +input+: the input (bytes).
    #
    # Invariant: title and site follow the rules a report read back from
    # another process is named by (Identity.title, Identity.site), so a
    # finding is one group whichever process files it.
    Outcome = Struct.new(:kind, :token, :title, :frames, :site, :input, keyword_init: true) do
      # Frames of the token that identifies a finding.
      self::DEDUP_FRAMES = 3

      # What groups it with the same bug (Identity#group).
      def identity = Identity.new(kind, "#{kind}--#{token}", title, site)

      # The outcome of the target raising +error+ on +input+ (or leaving
      # through another non-local exit, +error+ being what it threw), from
      # the parts of its report (Report.describe): +token+, its DEDUP_TOKEN
      # (nil: none); +exceptions+, the exception and its causes, outermost
      # first, as ["Class: message", frames]; +description+, what the
      # report says of the input (its title when there is no exception).
      def self.of(error, input, token:, exceptions:, description:)
        token ||= "unknown"
        heading = exceptions.empty? ? description : exceptions.first.first
        frames = exceptions.flat_map(&:last)
        new(kind: GROUP_KINDS.fetch(detector?(error) ? :detector : :exception), token:,
            title: Identity.title(heading.lines.first, token), frames:, site: Identity.site(frames, token), input:)
      end

      # Whether a bug detector raised +error+.
      def self.detector?(error) = defined?(Detectors::Report) && error.is_a?(Detectors::Report)

      # Identifies a finding across runs and inputs: the exception class and
      # its innermost methods as file:method, without line numbers (which move
      # with every edit), Ruby's "block in" decorations or the frames of
      # Ruby's methods written in C (RubyFrames.without_c_methods), a method
      # called by itself named once (RubyFrames.methods_once_in_a_row), a
      # block in a class body (a web route) with its line
      # (RubyFrames.token_name); a stack overflow
      # and a failed test assertion (by its call site's line and its kind,
      # never its message) by what BugShape.parts says.
      def self.dedup_token(error)
        frames = RubyFrames.target_frames(error.backtrace || []).reject { |frame| frame.start_with?("<internal:") }
        parts = BugShape.parts(error, frames, RubyFrames.method(:normalize_frame)) ||
                RubyFrames.methods_once_in_a_row(RubyFrames.without_c_methods(caller_frames(error, frames)))
                          .first(self::DEDUP_FRAMES)
        [error.class.name || "AnonymousException", *parts].join("--")
      end

      # The frames that name a finding: a bug detector's from the user's
      # code that made the dangerous call (UserCode: the harness's
      # directory, the libraries it requires, a web app's directory), whose
      # sink is a library method every caller shares (every query of a Rails
      # app reaches SQLite through the same frames of Active Record, so two
      # injections in two controllers are two groups, not one); any other
      # exception's from where it was raised.
      def self.caller_frames(error, frames)
        return frames unless detector?(error)

        first = frames.index { |frame| UserCode.include?(frame[/\A(.+?):\d+:in /, 1].to_s) }
        first ? frames.drop(first) : frames
      end
      private_class_method :caller_frames
    end
  end
end

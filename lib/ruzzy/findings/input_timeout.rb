# frozen_string_literal: true

module Ruzzy
  module Findings
    # A hang stopped in Ruby code: raised in the fuzz target by the run's
    # hang watch when the input overruns, and filed by Report (a suspect,
    # Suspects) when it escapes the target. Not a StandardError, so a
    # target's `rescue => e` does not swallow it.
    class InputTimeout < Exception # rubocop:disable Lint/InheritException -- must pass through rescue => e
      # The limit, the frames the hang stayed in (the watch's trace of its
      # loop; nil: unknown, the exception's backtrace stands in), and
      # whether they are a known hang's (stopped sooner).
      attr_reader :seconds, :loop_frames, :known

      def initialize(seconds, loop_frames = nil, known: false)
        @seconds = seconds
        @loop_frames = loop_frames
        @known = known
        super("the fuzz target ran for #{seconds} s")
      end
    end
  end
end

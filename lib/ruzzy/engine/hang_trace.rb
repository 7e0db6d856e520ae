# frozen_string_literal: true

require_relative "../own_files"

module Ruzzy
  module Engine
    # The frames a hang is stuck in: those that stay on the fuzzing
    # thread's stack while an overdue input runs on. A hang is a loop; the
    # methods its body calls come and go, and whichever one the alarm
    # interrupts is chance. So while the input is followed, a TracePoint on
    # the fuzzing thread notes how deep the stack is each time a method or
    # block returns: no frame at or below the shallowest of those depths
    # returned, and those frames, from the first return seen, are the
    # loop's (its innermost one is the method that loops, or the block
    # that Kernel#loop, Integer#times or #each calls again and again).
    #
    # A loop that calls no Ruby method or block returns nothing to see:
    # then there are no frames to give and the frames of the moment stand
    # in. The TracePoint slows the target; it is on only for the last
    # moments of an input that is about to be called a hang (HangWatch).
    #
    # Only the target's returns count: not those of ruzzy's own code
    # (OWN_FILES), nor any within #unseen. After libFuzzer's alarm, at Ruby's
    # safe point, ruzzy's code runs on the fuzzing thread on top of the
    # target's stack (HangWatch.ready_to_name?, the report), and the watch
    # may start following meanwhile (it waited for Ruby's lock while a C
    # call held it): seen, its returns would name the hang by the moment
    # the alarm stopped it (the C call and its callers), not by its loop.
    #
    # The TracePoint's block runs on the fuzzing thread and the watch reads
    # what it saw on its own, both holding the GVL; what it saw is one
    # Array, replaced whole. Every CHECK_EVERY returns the block also hands
    # the frames so far to the check given to #follow, on the fuzzing
    # thread: it may stop the input there and then (by raising) without
    # waiting for the watch's next turn with the GVL.
    class HangTrace
      # Returns seen between two calls of the check.
      CHECK_EVERY = 256

      def initialize(thread)
        @thread = thread
        @input = nil
        @finished = nil
        @seen = nil
        @check = nil
        @returns = 0
        @unseen = false
        @tracepoint = TracePoint.new(:return, :b_return) do |point|
          next if @unseen || point.path.start_with?(OWN_FILES)

          # Inside this block, caller_locations(1) starts at the frame that
          # returns: the stack once it has returned starts at 2.
          seen = @seen
          if seen.nil?
            stack = caller_locations(2)
            @seen = [stack, stack.size]
          elsif (caller_locations(seen[1] + 1, 1) || []).empty?
            @seen = [seen[0], caller_locations(2).size]
          end
          @check.call(@input, frames(@input)) if @check && ((@returns += 1) % CHECK_EVERY).zero?
        end
      end

      # Follows +input+ (an input's start time from
      # Ruzzy::Native._overdue_input; nil: no input to follow), calling
      # +check+ (if given) with it and its frames so far (#frames) every
      # CHECK_EVERY returns. Returns whether it was following it already.
      # An input already finished is not followed again (it is being
      # stopped: tracing its unwinding would only slow it).
      def follow(input, &check)
        return true if input && following?(input)
        return false if input && input == @finished

        @tracepoint.disable if @tracepoint.enabled?
        @input = input
        @seen = nil
        @check = check
        unseen { @tracepoint.enable(target_thread: @thread) } if input
        false
      end

      # Runs the block (ruzzy's code on the fuzzing thread, in the
      # middle of the target's input) with the returns within it unseen;
      # returns what the block returns.
      def unseen
        was = @unseen
        @unseen = true
        yield
      ensure
        @unseen = was
      end

      # Whether +input+ is being followed.
      def following?(input)
        input == @input && @tracepoint.enabled?
      end

      # The frames (Ruby backtrace strings, innermost first) that stayed on
      # the stack since +input+ was followed, or nil (it was not followed,
      # or nothing returned). Following goes on.
      def frames(input)
        seen = @seen
        return nil unless input && input == @input && seen

        stack, depth = seen
        depth.positive? ? stack.last(depth).map(&:to_s) : nil
      end

      # Stops following; the frames that stayed on the stack while +input+
      # was followed (#frames).
      def finish(input)
        unseen { @tracepoint.disable if @tracepoint.enabled? }
        @finished = input
        frames(input)
      end
    end
  end
end

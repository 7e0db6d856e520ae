# frozen_string_literal: true

require_relative "ruby_frames"

module Ruzzy
  module Findings
    # What stays the same from one finding of a bug to the next, where the
    # innermost frames do not: the repeating frames of a runaway recursion
    # (the overflow happens anywhere in the cycle) and the call site and
    # kind of a failed test assertion (its innermost frames are the test
    # framework's, the same for every assertion, and its message quotes
    # values that change with every input and that the framework prints in
    # different forms: never part of its name). Findings::Identity and
    # Report.dedup_token build tokens from these.
    #
    # Invariants: pure functions of their arguments and of which test
    # frameworks are loaded; a failed assertion's name never depends on its
    # message, and is the one name with a line number in it (the line is
    # what tells two assertions of one method apart).
    module BugShape
      # Failed test assertions (Exceptions, not StandardErrors), by the name
      # of their class, which exists when the framework is loaded.
      ASSERTIONS = %w[Minitest::Assertion RSpec::Expectations::ExpectationNotMetError
                      Test::Unit::AssertionFailedError].freeze

      # A cycle is looked for among the innermost frames, after at most
      # CYCLE_START frames that are not part of it (a C method or a helper
      # the recursion called when the stack ran out), at most CYCLE_FRAMES
      # long, repeated at least CYCLE_REPEATS times in a row.
      CYCLE_START = 8
      CYCLE_FRAMES = 16
      CYCLE_REPEATS = 4
      # Frames that can hold such a cycle.
      CYCLE_SPAN = CYCLE_START + (CYCLE_FRAMES * CYCLE_REPEATS)

      module_function

      # The parts of +error+'s token after its class, from its +frames+
      # (the fuzz target's, innermost first) named by +name+ (file:method),
      # or nil for an ordinary exception (its innermost frames). A stack
      # overflow (SystemStackError) is named by the frames of its recursion;
      # a failed test assertion by its call site and kind (assertion_parts).
      def parts(error, frames, name)
        if error.is_a?(SystemStackError)
          repeating = cycle(frames.first(CYCLE_SPAN).map { |frame| name.call(frame) })
          return repeating if repeating
        end
        assertion_parts(frames) if assertion?(error)
      end

      # The repeating frames at the top of +frames+ (innermost first), in a
      # canonical rotation (the one whose frames joined sort first), so a
      # stack that overflowed anywhere in the cycle gives the same frames;
      # nil when the top of the stack does not repeat.
      def cycle(frames)
        (0..CYCLE_START).each do |start|
          (1..CYCLE_FRAMES).each do |length|
            span = length * CYCLE_REPEATS
            break if start + span > frames.size

            window = frames[start, span]
            next unless window.each_index.all? { |index| index < length || window[index] == window[index - length] }

            return canonical_rotation(window.first(length))
          end
        end
        nil
      end

      def canonical_rotation(cycle)
        cycle.each_index.map { |index| cycle.rotate(index) }.min_by { |rotation| rotation.join("\n") }
      end

      # Whether +error+ is a failed assertion of a test framework loaded in
      # this process.
      def assertion?(error)
        ASSERTIONS.any? { |name| Object.const_defined?(name) && error.is_a?(Object.const_get(name)) }
      end

      # A failed assertion's call site and kind, from its +backtrace+
      # (Ruby's "path:line:in 'label'" strings, innermost first): the
      # innermost frame outside the test frameworks as file:line (the base
      # name of its file), and the method of the outermost framework frame
      # above it, the one that code called (assert_equal, refute_nil;
      # RSpec's to, not_to), named the same on every Ruby version. Without
      # a framework frame (an assertion raised by hand) the kind is left
      # out; without a frame outside the frameworks the innermost stands in.
      def assertion_parts(backtrace)
        framework = framework_dirs
        index = backtrace.index { |frame| framework.none? { |dir| frame.start_with?(dir) } }
        site = backtrace[index || 0] or return []
        path, line = site.match(/\A(.*?):(\d+):in /)&.captures
        called = backtrace[index - 1] if index&.positive?
        label = called&.split(/:\d+:in /, 2)&.last
        ["#{File.basename(path || site)}:#{line || 0}", *(RubyFrames.method_name(label) if label)]
      end

      # The directories of the loaded test frameworks' assertion code.
      def framework_dirs
        [
          ["Minitest::Assertions", ->(mod) { mod.instance_method(:assert) }, 1],
          ["Test::Unit::Assertions", ->(mod) { mod.instance_method(:assert_block) }, 1],
          ["RSpec::Expectations", ->(mod) { mod.method(:fail_with) }, 2],
          ["RSpec::Support", ->(mod) { mod.method(:notify_failure) }, 1]
        ].filter_map do |name, method, levels|
          next unless Object.const_defined?(name)

          file = method.call(Object.const_get(name)).source_location&.first
          next unless file

          "#{(1..levels).reduce(file) { |path, _| File.dirname(path) }}/"
        rescue NameError
          nil
        end
      end
    end
  end
end

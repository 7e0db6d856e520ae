# frozen_string_literal: true

require_relative "../error"

module Ruzzy
  module Findings
    # What stays the same from one finding of a bug to the next, where the
    # innermost frames do not: the repeating frames of a runaway recursion
    # (the overflow happens anywhere in the cycle) and the shape and place
    # of a failed test assertion (its message quotes the values, which
    # change with every input). Findings::Identity and Report.dedup_token
    # build tokens from these.
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

      # The longest message shape kept.
      SHAPE_LENGTH = 160

      module_function

      # The parts of +error+'s token after its class, from its +frames+
      # (the fuzz target's, innermost first) named by +name+ (file:method),
      # or nil for an ordinary exception (its innermost frames). A stack
      # overflow (SystemStackError) is named by the frames of its recursion;
      # a failed test assertion by where it failed (the innermost frame
      # outside the test framework) and its message's shape.
      def parts(error, frames, name)
        if error.is_a?(SystemStackError)
          repeating = cycle(frames.first(CYCLE_SPAN).map { |frame| name.call(frame) })
          return repeating if repeating
        end
        return unless assertion?(error)

        frame = assertion_frame(frames)
        [*(frame && name.call(frame)), message_shape(Error.safe_message(error))]
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

      # +message+ without the values it quotes, on one line: numbers as N,
      # quoted strings as S, symbols as Y, nil/true/false as V, inspected
      # objects (#<...>) as O, arrays as A and hashes as H (whatever they
      # hold), a diff of expected and actual values (Minitest and Test::Unit
      # print one) as D.
      def message_shape(message)
        shape = message.to_s.scrub.sub(/^(?:--- expected\n\+\+\+ actual|diff:)\n.*/m, "D")
        shape = shape.gsub(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/m, "S")
                     .gsub(/#<[^<>]*>/, "O")
                     .gsub(/(?<![\w:]):(?:[A-Za-z_]\w*[?!=]?|S)/, "Y")
                     .gsub(/(?<![\w.])[-+]?(?:0x\h+|\d[\d_]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.])/i, "N")
                     .gsub(/\b(?:nil|true|false)\b/, "V")
        shape = shape.gsub(/#<[^<>]*>/, "O") while shape.match?(/#<[^<>]*>/)
        shape = collapse(shape)
        shape = shape.gsub(/\s+/, " ").strip
        shape.length > SHAPE_LENGTH ? shape[0, SHAPE_LENGTH] : shape
      end

      # Nested [...] and {...} as A and H, innermost first.
      def collapse(shape)
        loop do
          collapsed = shape.gsub(/\[[^\[\]{}]*\]/, "A").gsub(/\{[^\[\]{}]*\}/, "H")
          return collapsed if collapsed == shape

          shape = collapsed
        end
      end

      # Where an assertion failed: the innermost frame of +backtrace+
      # (Ruby's "path:line:in 'label'" strings) outside the test frameworks.
      def assertion_frame(backtrace)
        framework = framework_dirs
        backtrace.find { |frame| framework.none? { |dir| frame.start_with?(dir) } } || backtrace.first
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

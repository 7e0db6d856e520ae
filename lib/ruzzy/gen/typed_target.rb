# frozen_string_literal: true

require_relative "arguments"
require_relative "../default_args"
require_relative "../libfuzzer_args"
require_relative "../findings/expected_exceptions"
require_relative "../findings/report"

module Ruzzy
  module Gen
    # A typed target as libFuzzer's byte target: each input is decoded into
    # the arguments and passed on. When the target raises (an exception not
    # expected), the arguments are shrunk first, by calling the target again
    # on smaller ones that raise the same class; the shrunk arguments are
    # printed as a regression file (and given to +on_finding+, which may save
    # them), then the original exception goes on to be the finding, so the
    # crash file libFuzzer writes reproduces it.
    class TypedTarget
      # libFuzzer flags typed targets default to: value profile, which keeps
      # inputs whose compared values came closer (a typed input is mostly
      # values that the target compares). A list element and its first
      # element both magic: about 1 s with it, often over 40 s without.
      # Left out when an argument's generator says it does not suit it
      # (Generator#value_profile?).
      FLAGS = ["-use_value_profile=1"].freeze

      # Longest a finding's shrinking takes, and at most half of
      # libFuzzer's -timeout (or the shrinking would become a timeout).
      SHRINK_SECONDS = 5

      # Failed test assertions (Exceptions, not StandardErrors), by the
      # name of their class, which exists when the framework is loaded.
      ASSERTIONS = Findings::BugShape::ASSERTIONS

      attr_reader :arguments

      # The target and libFuzzer arguments of Ruzzy.fuzz(+target+,
      # *+arguments+, args: +args+): typed when +arguments+ are generators,
      # else +arguments+ is Ruzzy 0.8's optional argv.
      def self.for_fuzz(target, arguments, args, session)
        unless arguments.any? { |argument| argument.is_a?(Generator) }
          if arguments.size > 1 || (args && arguments.any?)
            raise InvalidArgumentsError, "Ruzzy.fuzz takes the target, then libFuzzer's arguments (one Array) or " \
                                         "Ruzzy::Gen generators, got #{arguments.map(&:inspect).join(", ")}"
          end

          return [target, arguments.empty? ? args || DEFAULT_ARGS : arguments.first]
        end

        arguments = Arguments.new(arguments, "Ruzzy.fuzz")
        [typed(target, arguments, session), with_flags(args || DEFAULT_ARGS, arguments)]
      end

      # libFuzzer's arguments +args+ with the FLAGS that suit +arguments+
      # (an Arguments) where not given.
      def self.with_flags(args, arguments)
        defaults = arguments.gens.all?(&:value_profile?) ? FLAGS : []
        LibFuzzerArgs.validate(args).with_defaults(defaults).to_a
      end

      # +target+ called with the values of +arguments+, its arity checked.
      def self.typed(target, arguments, session, on_finding: nil, &call)
        check_arity(target, arguments.gens.size)
        call ||= ->(values) { target.call(*values) }
        new(arguments, expected: ->(error) { session.expected_exceptions.include?(error) },
                       shrink_seconds: -> { [SHRINK_SECONDS, session.timeout / 2.0].min }, on_finding:, &call)
      end

      def self.check_arity(target, count)
        return unless (target.is_a?(Proc) && target.lambda?) || target.is_a?(Method)

        required = target.arity.negative? ? -target.arity - 1 : target.arity
        return if count == required || (target.arity.negative? && count >= required)

        raise InvalidArgumentsError, "the target takes #{required} argument#{"s" unless required == 1}, " \
                                     "given #{count} generator#{"s" unless count == 1}"
      end

      # +call+ runs the target on the values (an Array); +expected+ says
      # whether an exception is expected (no finding).
      def initialize(arguments, expected:, shrink_seconds:, on_finding: nil, &call)
        @arguments = arguments
        @expected = expected
        @shrink_seconds = shrink_seconds
        @on_finding = on_finding
        @call = call
        @shrunk = {}
      end

      # The target's result when an Integer (-1 rejects the input), nil for
      # any other value (a typed target is often a property whose last
      # expression is not meant as an answer).
      def call(data)
        result = @call.call(@arguments.decode_values(data))
        result if result.is_a?(Integer)
      rescue Exception => e # rubocop:disable Lint/RescueException -- test assertions are not StandardErrors
        report(@arguments.decode(data), e) if finding?(e)
        raise
      end

      # Whether +error+ is a failed assertion of a test framework loaded in
      # this process.
      def self.assertion?(error)
        Findings::BugShape.assertion?(error)
      end

      private

      # Shrinks, prints and saves the arguments of the first finding of each
      # bug (its DEDUP_TOKEN: the exception class and innermost frames, a
      # failed assertion's call site and kind): a campaign that goes on
      # after a finding (`ruzzy --keep-going`, `ruzzy ci`) meets the same bug
      # again and again. Shrinking keeps to the same bug, so one violation
      # is never shrunk into another.
      def report(trees, error)
        bug = Findings::Report.dedup_token(error)
        return if @shrunk.key?(bug)

        @shrunk[bug] = true
        shrunk, calls = @arguments.shrink(trees, seconds: @shrink_seconds.call) do |candidate|
          raises?(candidate, bug)
        end
        text = @arguments.dump(shrunk)
        saved = @on_finding&.call(text)
        $stderr.write("ruzzy: the arguments of this finding, shrunk in #{calls} call#{"s" unless calls == 1}" \
                      "#{saved ? " (saved as #{saved})" : ""}:\n#{text}#{shrunk_description(shrunk, bug)}")
      rescue StandardError => e
        $stderr.write("ruzzy: could not shrink or save the arguments of this finding: #{e.class}: #{e.message}\n")
      end

      # Whether +error+'s arguments are shrunk: an exception Ruby code treats
      # as a finding, or a failed test assertion, and not expected. (A bug
      # detector's report is not: its finding is held natively.)
      def finding?(error)
        return false if @expected.call(error)

        ExpectedExceptions::FINDINGS.any? { |klass| error.is_a?(klass) } || TypedTarget.assertion?(error)
      end

      # Whether the target raises the finding +bug+ (a DEDUP_TOKEN) on +trees+.
      def raises?(trees, bug) = !failure(trees, bug).nil?

      # The exception of the finding +bug+ the target raises on +trees+, or
      # nil.
      def failure(trees, bug)
        @call.call(@arguments.values(trees))
        nil
      rescue SystemExit, SignalException
        raise
      rescue Exception => e # rubocop:disable Lint/RescueException -- any other exception of a candidate is not this bug
        e if finding?(e) && Findings::Report.dedup_token(e) == bug
      end

      # What the session says of the +shrunk+ arguments' run (a web target:
      # the request as sent, as curl and as a test; Session#input_description),
      # from one more run of them; "" when it says nothing.
      def shrunk_description(shrunk, bug)
        describe = Findings.context.input_description
        error = describe && failure(shrunk, bug)
        text = error ? describe.call(nil, error).to_s.chomp : ""
        text.empty? ? "" : "ruzzy: the shrunk arguments, run again:\n#{text}\n"
      end
    end
  end
end

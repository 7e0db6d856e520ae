# frozen_string_literal: true

# May use: native.

require_relative "native"

# Ruzzy.guide_equal, guide_include, explore_state, maximize and minimize.
module Ruzzy
  # The guidance API: feedback a harness gives the fuzzer about states its
  # coverage cannot see (docs/guidance.md), after Jazzer's. Each call names
  # its place with +id+, an Integer the harness chooses (one per call site).
  # Outside fuzzing each is a type check and a return.
  module Guidance
    # Integers past 64 bits are read by their low 64 bits.
    LOW_64_BITS = (1 << 64) - 1

    module_function

    # Steers inputs towards +current+ == +target+ (two Strings or two
    # Integers), as if the code had compared them.
    def guide_equal(current, target, id)
      id = check_id(id, "guide_equal")
      unless (current.is_a?(String) && target.is_a?(String)) || (current.is_a?(Integer) && target.is_a?(Integer))
        raise TypeError, "Ruzzy.guide_equal: current and target must be two Strings or two Integers, " \
                         "got #{current.class} and #{target.class}"
      end

      Native._guide_equal_at(current, target, id)
      nil
    end

    # Steers inputs towards a +haystack+ that contains +needle+ (Strings).
    def guide_include(haystack, needle, id)
      id = check_id(id, "guide_include")
      unless haystack.is_a?(String) && needle.is_a?(String)
        raise TypeError, "Ruzzy.guide_include: haystack and needle must be Strings, " \
                         "got #{haystack.class} and #{needle.class}"
      end

      Native._guide_include_at(haystack, needle, id)
      nil
    end

    # Makes each distinct +state+ (an Integer) reached at +id+ new coverage,
    # so inputs that reach a new state are kept.
    def explore_state(state, id)
      id = check_id(id, "explore_state")
      raise TypeError, "Ruzzy.explore_state: state must be an Integer, got #{state.class}" unless state.is_a?(Integer)

      Native._explore_state(signed64(state), id)
      nil
    end

    # Steers inputs towards a larger +value+ within +range+ (Integers): a
    # value past the largest so far is new coverage. The range is cut into
    # at most Ruzzy::GUIDANCE_STEPS steps.
    def maximize(value, range, id)
      id = check_id(id, "maximize")
      Native._count_steps(step(value, range, "maximize"), id)
      nil
    end

    # Steers inputs towards a smaller +value+ within +range+, as maximize.
    def minimize(value, range, id)
      id = check_id(id, "minimize")
      Native._count_steps(steps(range) - 1 - step(value, range, "minimize"), id)
      nil
    end

    # The step of +value+ in +range+: 0 at its start, steps(range) - 1 at
    # its end; values outside count as its ends.
    def step(value, range, name)
      raise TypeError, "Ruzzy.#{name}: value must be an Integer, got #{value.class}" unless value.is_a?(Integer)

      unless range.is_a?(Range) && range.begin.is_a?(Integer) && range.end.is_a?(Integer) && range.size.positive?
        raise ArgumentError, "Ruzzy.#{name}: range must be a non-empty Range of two Integers (0..1000), " \
                             "got #{range.inspect}"
      end

      low = range.begin
      high = range.exclude_end? ? range.end - 1 : range.end
      return 0 if value <= low
      return steps(range) - 1 if value >= high

      (value - low) * (steps(range) - 1) / (high - low)
    end

    def steps(range)
      [range.size, GUIDANCE_STEPS].min
    end

    # +id+ as a signed 64-bit Integer.
    def check_id(id, name)
      raise TypeError, "Ruzzy.#{name}: id must be an Integer (its call site), got #{id.class}" unless id.is_a?(Integer)

      signed64(id)
    end

    def signed64(value)
      return value if value.bit_length < 64

      value &= LOW_64_BITS
      value >= 1 << 63 ? value - (1 << 64) : value
    end

    private_class_method :step, :steps, :check_id, :signed64
  end

  # The guidance API (Ruzzy::Guidance), called on Ruzzy itself.
  def self.guide_equal(current, target, id) = Guidance.guide_equal(current, target, id)
  def self.guide_include(haystack, needle, id) = Guidance.guide_include(haystack, needle, id)
  def self.explore_state(state, id) = Guidance.explore_state(state, id)
  def self.maximize(value, range, id) = Guidance.maximize(value, range, id)
  def self.minimize(value, range, id) = Guidance.minimize(value, range, id)
end

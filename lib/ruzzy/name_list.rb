# frozen_string_literal: true

# May use: error.

require_relative "error"

module Ruzzy
  # Settings that take true (every name), false or nil (none), or a list of
  # names: compare_hooks: (groups), detectors: (detectors).
  module NameList
    module_function

    # The names +value+ chooses among +known+ (Symbols), in the order
    # given. An unknown name raises InvalidArgumentsError, naming +option+
    # and the known +kind+s.
    def parse(value, known, option:, kind:)
      case value
      when true then known
      when false, nil then []
      else
        names = Array(value).map { |name| name.to_s.strip.to_sym }
        unknown = names - known
        unless unknown.empty?
          raise InvalidArgumentsError,
                "#{option}: unknown #{kind} #{unknown.join(", ")} (known: #{known.join(", ")})"
        end
        names
      end
    end
  end
end

# frozen_string_literal: true

# A calculator endpoint: "12 + 30" -> 42.
module Calculator
  OPERATORS = %w[+ - * /].freeze

  # Vulnerable: the operator is sent as a method name, so any public
  # method of Integer (and Kernel) can be called.
  def self.apply(line)
    left, operator, right = line.split(" ", 3)
    return unless right

    Integer(left, exception: false)&.public_send(operator, Integer(right, exception: false) || 0)
  rescue ArgumentError, NoMethodError, TypeError, ZeroDivisionError
    nil
  end

  # Safe: only the four operators are sent.
  def self.apply_safely(line)
    left, operator, right = line.split(" ", 3)
    return unless right && OPERATORS.include?(operator)

    Integer(left, exception: false)&.public_send(operator, Integer(right, exception: false) || 0)
  rescue ArgumentError, NoMethodError, TypeError, ZeroDivisionError
    nil
  end
end

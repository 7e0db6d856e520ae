# frozen_string_literal: true

# Validates a quoted list of words: "red green blue" or 'a b'.
module QuotedList
  # Vulnerable: the nested repetition backtracks exponentially when the
  # closing quote is missing; the backreference keeps Ruby 3.3's match
  # cache from saving it.
  BACKTRACKING = /\A(["'])(?:\w+\s?)*\1\z/

  # Safe: every character is consumed one way only.
  LINEAR = /\A(["'])[\w\s]*\1\z/

  def self.valid?(text)
    BACKTRACKING.match?(text)
  end

  def self.valid_safely?(text)
    LINEAR.match?(text)
  end
end

# frozen_string_literal: true

# Highlights a search term in a text, as a search results page does.
module Highlighter
  TEXT = "Ruby is a dynamic, open source programming language with a focus on simplicity."

  # Vulnerable: the term is compiled as a pattern; "(" or "[" breaks it
  # (and a crafted term can backtrack for seconds).
  def self.highlight(term)
    TEXT.gsub(Regexp.new(term, Regexp::IGNORECASE)) { |match| "<b>#{match}</b>" }
  rescue RegexpError
    TEXT
  end

  # Safe: the term is matched as text.
  def self.highlight_safely(term)
    TEXT.gsub(Regexp.new(Regexp.escape(term), Regexp::IGNORECASE)) { |match| "<b>#{match}</b>" }
  end

  # The term as UTF-8 text, or nil.
  def self.term(data)
    term = data.dup.force_encoding(Encoding::UTF_8)
    term.valid_encoding? && !term.empty? ? term : nil
  end
end

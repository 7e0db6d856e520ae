# frozen_string_literal: true

# A StringScanner tokenizer: the bug is behind one keyword among
# identifiers, numbers and punctuation.
require "ruzzy"
require "strscan"

TOKENS = [/\s+/, /[A-Za-z_]\w*/, /\d+/, /[{}();=+-]/].freeze

Ruzzy.fuzz(lambda do |data|
  scanner = StringScanner.new(data)
  until scanner.eos?
    raise "keyword" if scanner.scan(/synchronized\b/)
    return unless TOKENS.any? { |token| scanner.skip(token) }
  end
end)

# frozen_string_literal: true

# A date-shaped token checked by Date.new (which rejects 2024-13-45); the
# bug is behind one valid date.
require "ruzzy"
require "date"

DATE = /\A(\d{4})-(\d{2})-(\d{2})\z/

Ruzzy.fuzz(lambda do |data|
  match = DATE.match(data) or return
  date = Date.new(match[1].to_i, match[2].to_i, match[3].to_i)
  raise "christmas" if date.month == 12 && date.day == 25
rescue Date::Error
  nil
end)

# frozen_string_literal: true

# A target whose every call fires a known number of coverage events (counted
# by bench/events.rb with Ruby's own Coverage): 25 loop iterations, each with
# two lines and a branch.
module HundredEvents
  def self.run(data)
    i = 0
    acc = 0
    while i < 25
      acc += data.bytesize.odd? ? 1 : 2
      i += 1
    end
    acc
  end
end

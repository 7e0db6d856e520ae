# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # How ruzzy writes a duration for a person: seconds, milliseconds or
  # microseconds, whichever keeps the number readable.
  module ShownDuration
    module_function

    def of(seconds)
      return format("%.2f s", seconds) if seconds >= 1
      return format("%.1f ms", seconds * 1e3) if seconds >= 1e-3

      format("%.1f us", seconds * 1e6)
    end
  end
end

# frozen_string_literal: true

require_relative "hang_check"
require_relative "alone_check"

module Ruzzy
  module Campaign
    # The inputs a campaign runs alone beside its workers: the suspected
    # hangs (HangCheck) and the inputs of the groups filed (AloneCheck),
    # each check on a thread of its own. At the campaign's end the hangs
    # come first: a hang's lone run may file another group, whose input
    # has then run alone.
    class LoneRuns
      # +checks+: what HangCheck takes; +before+ AloneCheck's.
      def initialize(before:, **checks)
        @checks = [HangCheck.new(**checks), AloneCheck.new(**checks, before:)]
      end

      def start
        @checks.each(&:start)
        self
      end

      # Says what the checks found since the last look.
      def show = @checks.each(&:show)

      # At the campaign's end: runs what is left to check, and says what
      # was found.
      def check_last = @checks.each(&:check_last)

      # Stops the checks at once (the campaign was interrupted, or ended
      # early): nothing is left half done.
      def stop = @checks.each { |check| check.finish(remaining: false) }
    end
  end
end

# frozen_string_literal: true

module Ruzzy
  module Campaign
    # Keeps the workers' shared corpus directory visible to all of them.
    # libFuzzer (-reload) lists the directory again only when its
    # modification time, in whole seconds, is newer than at its last
    # listing: an input another worker writes later in that same second
    # would wait for the next input written in a later second, which may
    # never come. Once a second the supervisor moves a directory changed in
    # an earlier second to the present one, so every worker lists it again.
    class CorpusClock
      # +dir+: the corpus directory the workers write into, or nil when they
      # have none of the campaign's (a fuzz test's own corpus).
      def initialize(dir)
        @dir = dir
        @seen = mtime
      end

      # Keeps +dir+ (nil or not) as the directory when there was none: a fuzz
      # test's, which its first worker announces.
      def watch(dir)
        return if @dir || dir.nil?

        @dir = dir
        @seen = mtime
      end

      # Called about once a second: touches the directory once it changed in
      # a second that has passed.
      def tick
        current = mtime
        return if current.nil? || current == @seen

        now = Time.now
        return unless now.to_i > current.to_i

        File.utime(File.atime(@dir), now, @dir)
        @seen = mtime
      rescue SystemCallError
        nil # the directory went away or cannot be touched: nothing to share
      end

      private

      def mtime
        @dir && File.mtime(@dir)
      rescue SystemCallError
        nil
      end
    end
  end
end

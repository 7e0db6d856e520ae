# frozen_string_literal: true

# A maze of nested ifs, one check per line: each step deeper is new coverage,
# so the fuzzer walks it one byte at a time.
#
#   ruzzy examples/maze.rb -seed=1
#
# finds "MAZE!" (RuntimeError "maze solved").

require "ruzzy"

# Walks the maze; raises when the exit is reached.
module Maze
  # rubocop:disable Style/SoleNestedConditional, Metrics/BlockNesting -- one check per line is the point
  def self.walk(data)
    return if data.bytesize < 5

    if data.getbyte(0) == 0x4d # M
      if data.getbyte(1) == 0x41 # A
        if data.getbyte(2) == 0x5a # Z
          if data.getbyte(3) == 0x45 # E
            raise "maze solved" if data.getbyte(4) == 0x21 # !
          end
        end
      end
    end
    nil
  end
  # rubocop:enable Style/SoleNestedConditional, Metrics/BlockNesting
end

Ruzzy.fuzz(->(data) { Maze.walk(data) })

# frozen_string_literal: true

# A maze on a single line: every step is one ternary, and every input runs
# the same ternaries on the same line the same number of times. Coverage keyed
# on (file, line) sees the same thing whatever the input; ruzzy tells the two
# arms of each ternary apart, so each step taken is new coverage.
#
#   ruzzy examples/ternary_maze.rb -seed=1
#
# finds "TERN" (RuntimeError "ternary maze solved").

require "ruzzy"

# Walks the one-line maze; raises when the exit is reached.
module TernaryMaze
  def self.walk(data)
    return if data.bytesize < 4

    b = data.bytes
    # rubocop:disable Layout/LineLength, Style/Semicolon, Style/RedundantSelfAssignmentBranch -- the point: one line
    d = b[0] == 0x54 ? 1 : 0; d = d == 1 && b[1] == 0x45 ? 2 : d; d = d == 2 && b[2] == 0x52 ? 3 : d; d = d == 3 && b[3] == 0x4e ? 4 : d
    # rubocop:enable Layout/LineLength, Style/Semicolon, Style/RedundantSelfAssignmentBranch
    raise "ternary maze solved" if d == 4
  end
end

Ruzzy.fuzz(->(data) { TernaryMaze.walk(data) })

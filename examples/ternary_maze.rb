# frozen_string_literal: true

# A maze on a single line: every step is the `else` arm of a one-line
# ternary. Coverage keyed on (file, line) sees one line executed whatever the
# input; ruzzy tells the arms apart, so each step is new coverage.
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
    # rubocop:disable Style/NestedTernaryOperator, Style/NegatedIfElseCondition, Metrics/BlockNesting -- the point
    step = b[0] != 0x54 ? :a : b[1] != 0x45 ? :b : b[2] != 0x52 ? :c : b[3] != 0x4e ? :d : :exit
    # rubocop:enable Style/NestedTernaryOperator, Style/NegatedIfElseCondition, Metrics/BlockNesting
    raise "ternary maze solved" if step == :exit
  end
end

Ruzzy.fuzz(->(data) { TernaryMaze.walk(data) })

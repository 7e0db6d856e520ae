# frozen_string_literal: true

# A maze walked by the input's bytes ("U", "D", "L", "R"; anything else, or
# a wall, ends the walk). Every step runs the same code whatever the
# position, so coverage cannot tell a walk that got far from one that went
# round in circles: the harnesses differ only in reporting the position to
# Ruzzy.explore_state.
module MazeWalk
  MAP = <<~MAZE.lines.map(&:chomp).freeze
    ###############
    #S    #       #
    # ### # ##### #
    #   # #     # #
    ### # ##### # #
    #   #     # # #
    # ####### # # #
    #       # #   #
    ####### # #####
    #     # #     #
    # ### # ##### #
    # #   #     # #
    # # ####### # #
    # #         #X#
    ###############
  MAZE
  START = [1, 1].freeze

  # The exit was reached.
  class Solved < StandardError; end

  def self.walk(moves, explore:)
    x, y = START
    moves.each_byte do |move|
      case move
      when 85 then y -= 1 # U
      when 68 then y += 1 # D
      when 76 then x -= 1 # L
      when 82 then x += 1 # R
      else break
      end
      cell = MAP[y][x]
      break if cell == "#"
      raise Solved, "reached the exit" if cell == "X"

      Ruzzy.explore_state((y << 8) | x, 1) if explore
    end
    nil
  end
end

# frozen_string_literal: true

# The same maze, each position reported with Ruzzy.explore_state.
require "ruzzy"
require_relative "maze_walk"

Ruzzy.fuzz(->(data) { MazeWalk.walk(data, explore: true) })

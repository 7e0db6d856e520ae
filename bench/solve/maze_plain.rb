# frozen_string_literal: true

# A maze whose positions coverage cannot see (bench/solve/maze_walk.rb).
require "ruzzy"
require_relative "maze_walk"

Ruzzy.fuzz(->(data) { MazeWalk.walk(data, explore: false) })

# frozen_string_literal: true

# The child process of `ruzzy cov`, run by Ruzzy::Cov::Command as
#   ruby -I LIB [-I DIR]... replay.rb HARNESS INPUT_LIST STATUS DUMP FILTER_JSON
# (see Ruzzy::Cov::Replayer). Not a command of its own.

require "json"
require "ruzzy"
require_relative "replayer"

harness, list, status, dump, filter = ARGV
$PROGRAM_NAME = harness
ARGV.clear
inputs = File.readlines(list, chomp: true).map { |line| line.split("\t", 2).then { |i, p| [Integer(i), p] } }
exit Ruzzy::Cov::Replayer.new(harness: File.expand_path(harness), inputs:, status:, dump:,
                              spec: JSON.parse(filter)).run

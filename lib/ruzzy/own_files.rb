# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # The directory holding ruzzy's Ruby files (lib/ of the installed gem).
  LIB_DIR = File.expand_path("..", __dir__)

  # What ruzzy's own Ruby files start with: they are never instrumented,
  # their comparisons are never reported, their frames are left out of
  # findings, and calls they make are never bug detector findings.
  OWN_FILES = "#{LIB_DIR}/".freeze
end

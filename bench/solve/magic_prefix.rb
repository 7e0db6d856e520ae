# frozen_string_literal: true

# A magic prefix checked with start_with?.
require "ruzzy"

Ruzzy.fuzz(->(data) { raise "magic prefix" if data.start_with?("%PDF-1.7") })

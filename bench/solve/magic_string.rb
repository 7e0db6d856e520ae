# frozen_string_literal: true

# A 14-byte magic string compared with ==.
require "ruzzy"

Ruzzy.fuzz(->(data) { raise "magic string" if data == "SECRETKEY12345" })

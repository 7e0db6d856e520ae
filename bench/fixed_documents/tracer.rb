# frozen_string_literal: true

# Loads harness.rb with coverage the way Ruzzy 0.8 users do (a tracer
# script calling Ruzzy.trace), so one command line runs under both gems.

require "ruzzy"

Ruzzy.trace("harness.rb")

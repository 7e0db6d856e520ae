# frozen_string_literal: true

# Ruzzy 0.8's remaining module functions, so that code written for it runs
# unchanged. (Its constants, ARGV0, EXT_PATH and DLEXT, are with the others
# in ruzzy.rb and default_args.rb; c_libfuzzer_is_loaded, c_trace_cmp8 and c_trace_div8 are
# native.) See docs/migrating-from-ruzzy.md. They call Ruzzy.fuzz and Ruzzy.trace, which
# ruzzy.rb defines before it loads this file.
#
# May use: nothing.
module Ruzzy
  module_function

  # Ruzzy.fuzz under 0.8's name for its native entry point.
  def c_fuzz(test_one_input, args)
    fuzz(test_one_input, args)
  end

  # Turns on coverage and requires +harness_path+ (0.8's native half of
  # Ruzzy.trace; a relative path is taken from the current directory).
  def c_trace(harness_path)
    trace(File.expand_path(harness_path.to_s))
  end
end

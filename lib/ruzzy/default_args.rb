# frozen_string_literal: true

# May use: libfuzzer_args.

require_relative "libfuzzer_args"

# libFuzzer's argument list when Ruzzy.fuzz is given none. DEFAULT_ARGS is
# read from ARGV and $PROGRAM_NAME when this file is loaded: it is loaded
# with ruzzy.rb, which the `ruzzy` command requires only once it has set
# them for the harness (never earlier, from the command's own files).
module Ruzzy
  # The program name libFuzzer gets, and runs again for -fork, -jobs and
  # -merge: RUZZY_ARGV0 when set (a wrapper script that sets up the
  # environment, as with Ruzzy 0.8), else the script itself.
  ARGV0 = ENV.fetch("RUZZY_ARGV0", $PROGRAM_NAME)

  # libFuzzer's argument list when none is given: ARGV0, then the script's
  # own arguments (flags such as -runs=1000 and corpus directories). When the
  # script's arguments contain "--", only those after it go to libFuzzer;
  # those before are the harness's own.
  DEFAULT_ARGS = ([ARGV0] + (ARGV.include?("--") ? ARGV.drop(ARGV.index("--") + 1) : ARGV)).freeze

  # Flags ruzzy adds to libFuzzer's argument list unless already given.
  # -print_funcs=0: every instrumented line is a "function" to libFuzzer,
  # whose NEW_FUNC lines would only repeat what -print_coverage shows.
  DEFAULT_FLAGS = ["-print_final_stats=1", "-timeout=#{LibFuzzerArgs::RUZZY_DEFAULT_TIMEOUT}", "-print_funcs=0"].freeze
end

# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # Exit statuses of ruzzy's processes and commands: the one place they are
  # defined, for the Ruby code and for the native extension (which reads
  # EXIT_USAGE and EXIT_INTERNAL_ERROR from here when it loads).

  # The run ended without a finding (-runs or -max_total_time reached).
  EXIT_OK = 0

  # The ruzzy command's harness raised while loading, before fuzzing
  # started; `ruzzy ci`: a fuzz test could not run.
  EXIT_HARNESS_ERROR = 1

  # `ruzzy build-ext`: the build failed, or built an extension that is not
  # instrumented for fuzzing.
  EXIT_BUILD_FAILED = 1

  # ruzzy was used wrongly: unknown command-line options, a missing harness,
  # a fuzz target returning something other than nil, 0 or -1.
  EXIT_USAGE = 2

  # ruzzy's own native code failed (a Rust panic): a bug in ruzzy, not a
  # finding; no crash file is written.
  EXIT_INTERNAL_ERROR = 3

  # An input ran past -timeout (libFuzzer's -timeout_exitcode).
  EXIT_TIMEOUT = 70

  # The process went over -rss_limit_mb (libFuzzer's out-of-memory status).
  EXIT_OUT_OF_MEMORY = 71

  # The run was interrupted (libFuzzer's -interrupted_exitcode).
  EXIT_INTERRUPTED = 72

  # A finding (libFuzzer's -error_exitcode; sanitizer reports too).
  EXIT_FINDING = 77
end

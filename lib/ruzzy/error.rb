# frozen_string_literal: true

module Ruzzy
  # Tag module carried by every exception ruzzy raises, so that
  # `rescue Ruzzy::Error` catches them all while each one still is the
  # standard Ruby class its situation calls for (`rescue TypeError` works too).
  module Error; end

  # The fuzz target given to Ruzzy.fuzz does not respond to #call.
  class InvalidTargetError < TypeError
    include Error
  end

  # The libFuzzer argument list (or an option of Ruzzy.fuzz) is unusable:
  # empty, not an Array of Strings, a String with a NUL byte, or an option
  # with a value of the wrong kind.
  class InvalidArgumentsError < ArgumentError
    include Error
  end

  # A sanitizer preload was asked for but is not installed (clang or its
  # runtimes were missing at `gem install`), or Ruzzy.dummy was called
  # without AddressSanitizer preloaded. The message says what to do.
  class SanitizerUnavailableError < RuntimeError
    include Error
  end

  # Ruzzy.fuzz was called a second time in one process. libFuzzer can run only
  # once per process; start another process (or use -fork / -jobs) instead.
  class AlreadyFuzzingError < RuntimeError
    include Error
  end
end

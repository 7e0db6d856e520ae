# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # Tag carried by every exception ruzzy raises: `rescue Ruzzy::Error`
  # catches them all.
  #
  # The exceptions themselves are instances of the standard classes Ruzzy 0.8
  # raised in the same situations (RuntimeError from Ruzzy.fuzz, ArgumentError
  # from FuzzedDataProvider), extended with a tag module that names the
  # problem. So `rescue ArgumentError`, test-unit's `assert_raise(ArgumentError)`
  # (which checks `instance_of?`), `rescue Ruzzy::InvalidArgumentsError` and
  # `rescue Ruzzy::Error` all work:
  #
  #   raise Ruzzy::InvalidArgumentsError, "min must be <= max"
  #   # => ArgumentError, also a Ruzzy::InvalidArgumentsError and a Ruzzy::Error
  module Error
    # What makes a tag raisable: `raise Tag, message` calls Tag.exception.
    module Tag
      # An instance of +raised_as+ (by default the tag's RAISED_AS) with
      # +message+, extended with this tag.
      def exception(message = name, raised_as = self::RAISED_AS)
        raised_as.new(message).extend(self)
      end
    end

    extend Tag
    RAISED_AS = RuntimeError

    # "RuntimeError (Ruzzy::AlreadyFuzzingError)" for a tagged exception,
    # the class name alone for any other.
    def self.class_name(exception)
      tags = exception.singleton_class.ancestors.reject { |mod| mod.is_a?(Class) || mod == Error }
      tags = tags.select { |mod| mod.include?(Error) }
      tags.empty? ? exception.class.name.to_s : "#{exception.class} (#{tags.join(", ")})"
    end

    # The message of +exception+, or "unhandled exception" for an empty
    # one, as Ruby's own error printer says, as UTF-8 text; never raises.
    def self.safe_message(exception)
      message = exception.message.to_s
      message.empty? ? "unhandled exception" : text(message)
    rescue Exception => e # rubocop:disable Lint/RescueException -- any failure here must not hide the finding
      "(#message raised #{e.class})"
    end

    # +string+ as valid UTF-8 text to print beside other text: a byte that
    # is not part of a character is written \xNN (a binary message, such
    # as a database's error about the query an input built).
    def self.text(string)
      unless string.encoding.ascii_compatible?
        string = string.encode(Encoding::UTF_8, invalid: :replace, undef: :replace)
      end
      string.dup.force_encoding(Encoding::UTF_8).scrub do |bytes|
        bytes.unpack("C*").map { |byte| format("\\x%02X", byte) }.join
      end
    end
  end

  # The fuzz target given to Ruzzy.fuzz does not respond to #call.
  module InvalidTargetError
    include Error
    extend Error::Tag
    RAISED_AS = RuntimeError
  end

  # An argument is unusable: the libFuzzer argument list of Ruzzy.fuzz (empty,
  # not an Array of Strings, a NUL byte), an option with a value of the wrong
  # kind, or a FuzzedDataProvider argument (min > max, an empty list).
  module InvalidArgumentsError
    include Error
    extend Error::Tag
    RAISED_AS = ArgumentError
  end

  # A sanitizer preload was asked for but is not installed (clang or its
  # runtimes were missing at `gem install`), or Ruzzy.dummy was called
  # without AddressSanitizer preloaded. The message says what to do.
  module SanitizerUnavailableError
    include Error
    extend Error::Tag
    RAISED_AS = RuntimeError
  end

  # The engine asked for (`ruzzy --engine`, RUZZY_ENGINE) is not installed:
  # LibAFL's runtime is built at `gem install` only when asked for. The
  # message says how to get it.
  module EngineUnavailableError
    include Error
    extend Error::Tag
    RAISED_AS = RuntimeError
  end

  # Ruzzy.fuzz was called a second time in one process. libFuzzer can run only
  # once per process; start another process (or use -fork / -jobs) instead.
  module AlreadyFuzzingError
    include Error
    extend Error::Tag
    RAISED_AS = RuntimeError
  end

  # A campaign's finding cannot be run again as the campaign ran it
  # (`ruzzy findings replay`, `minimise`): the directory it ran in, or its
  # command, is gone. The message says which.
  module ReproductionError
    include Error
    extend Error::Tag
    RAISED_AS = RuntimeError
  end

  # A typed fuzz test's regression file (`ruzzy fuzz v1`) cannot be read,
  # or its values do not fit the test's generators. The message names the
  # file, and the line and column where it can.
  module RegressionFileError
    include Error
    extend Error::Tag
    RAISED_AS = ArgumentError
  end
end

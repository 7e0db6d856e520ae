# frozen_string_literal: true

require_relative "../error"

module Ruzzy
  # The exceptions a harness expects its target to raise for bad input
  # (Ruzzy.fuzz's ignore: keyword, the ruzzy command's --ignore). They are
  # ordinary inputs, not findings.
  #
  # Each entry is an exception class (or its name, looked up when first
  # needed), optionally paired with a message pattern:
  #
  #   ignore: [JSON::ParserError, [ArgumentError, /invalid date/], "Psych::SyntaxError"]
  #   ignore: { ArgumentError => /invalid date/ }
  #
  # On the command line: --ignore=JSON::ParserError --ignore='ArgumentError:/invalid date/'
  class ExpectedExceptions
    Entry = Struct.new(:klass, :pattern)

    # What Ruby code of ruzzy's own (a fuzz test's replay, a typed target's
    # shrinking) treats as a target's finding when it rescues: any
    # exception but those that stop Ruby (Interrupt, SystemExit, signals).
    FINDINGS = [StandardError, ScriptError, SystemStackError, NoMemoryError].freeze

    # Parses one --ignore value: "Name" or "Name:/regexp/".
    def self.from_command_line(text)
      name, pattern = text.split(":/", 2)
      return [name] unless pattern

      raise InvalidArgumentsError, "--ignore=#{text}: the message pattern must end with /" unless pattern.end_with?("/")

      [name, Regexp.new(pattern.delete_suffix("/"))]
    end

    def initialize(specs)
      @entries = normalize(specs).map { |klass, pattern| Entry.new(check_class(klass), check_pattern(pattern)) }
    end

    def empty?
      @entries.empty?
    end

    # Whether +error+ is expected.
    def include?(error)
      @entries.any? do |entry|
        klass = resolve(entry)
        error.is_a?(klass) && (entry.pattern.nil? || entry.pattern.match?(error.message.to_s))
      end
    end

    def +(other)
      self.class.new(to_specs + other.to_specs)
    end

    # The entries as ignore: specs.
    def to_specs
      @entries.map { |entry| [entry.klass, entry.pattern] }
    end

    private

    def normalize(specs)
      case specs
      when nil then []
      when Hash then specs.to_a
      when Array then specs.map { |spec| spec.is_a?(Array) ? spec : [spec, nil] }
      else [[specs, nil]]
      end
    end

    def check_class(klass)
      return klass if klass.is_a?(String) && !klass.empty?
      return klass if klass.is_a?(Module)

      raise InvalidArgumentsError, "ignore: expects exception classes (or their names), got #{klass.inspect}"
    end

    def check_pattern(pattern)
      case pattern
      when nil, Regexp then pattern
      when String then Regexp.new(Regexp.escape(pattern))
      else raise InvalidArgumentsError, "ignore: message patterns are Regexps or Strings, got #{pattern.inspect}"
      end
    end

    def resolve(entry)
      return entry.klass if entry.klass.is_a?(Module)

      entry.klass = Object.const_get(entry.klass)
    rescue NameError
      raise InvalidArgumentsError, "ignore: no exception class named #{entry.klass}"
    end
  end
end

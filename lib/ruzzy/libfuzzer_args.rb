# frozen_string_literal: true

# May use: error.

require_relative "error"

module Ruzzy
  # libFuzzer's argument list, program name first: validated once, and the
  # one place libFuzzer's flags (-name=value, the last one wins) are read or
  # changed.
  class LibFuzzerArgs
    # libFuzzer's own -timeout when none is given.
    LIBFUZZER_DEFAULT_TIMEOUT = 1200
    # Seconds an input may run before it is reported as a timeout
    # (`timeout-<sha1>`), unless -timeout=N says otherwise: ruzzy gives it
    # to libFuzzer (DEFAULT_FLAGS), and it is a campaign's hang threshold.
    # libFuzzer's own default, 1200, lets a hang stall a short run with
    # nothing reported; 25 is what ClusterFuzz (OSS-Fuzz) gives libFuzzer
    # targets, so a hang found here is one OSS-Fuzz reports too
    # (docs/workflow.md).
    RUZZY_DEFAULT_TIMEOUT = 25
    # libFuzzer's own -rss_limit_mb when none is given.
    LIBFUZZER_DEFAULT_RSS_LIMIT_MB = 2048

    # Flags with which libFuzzer runs child processes rather than the
    # target (any value but 0).
    PARENT_FLAGS = %w[fork jobs workers merge minimize_crash set_cover_merge].freeze

    # Flags with which libFuzzer reads what each input covers as a fact
    # rather than fuzzing (a merge's or a minimisation's step in a child
    # process, coverage printed at the end): quiet coverage keeps every
    # coverage event on under them.
    COVERAGE_READING_FLAGS = %w[merge_inner merge_control_file minimize_crash_internal_step cleanse_crash
                                print_coverage print_full_coverage print_corpus_stats analyze_dict].freeze

    # A flag: -name=value.
    FLAG = /\A-([a-z_]+)=/

    # The name of the flag +word+ ("-runs=5": "runs"), or nil when +word+
    # is not a flag (an input file or directory).
    def self.flag_name(word)
      word[FLAG, 1]
    end

    # Checks +args+ (an Array of Strings without NUL bytes, the program name
    # first) and returns them parsed; raises InvalidArgumentsError (tagged
    # onto RuntimeError or TypeError, as Ruzzy 0.8's c_fuzz raised) otherwise.
    def self.validate(args)
      unless args.is_a?(Array)
        raise InvalidArgumentsError.exception("args must be an Array of Strings, got #{args.inspect}", RuntimeError)
      end

      if args.empty?
        raise InvalidArgumentsError.exception("args must not be empty: its first element is the program name",
                                              RuntimeError)
      end

      args.each_with_index do |arg, index|
        unless arg.is_a?(String)
          raise InvalidArgumentsError.exception("args[#{index}] must be a String, got #{arg.inspect}", TypeError)
        end
        raise InvalidArgumentsError, "args[#{index}] contains a NUL byte" if arg.include?("\0")
      end
      new(args)
    end

    def initialize(words)
      @words = words.map { |word| word.dup.freeze }.freeze
    end

    # The arguments as an Array of Strings.
    def to_a
      @words
    end

    def ==(other)
      other.is_a?(LibFuzzerArgs) && to_a == other.to_a
    end

    # The program name (libFuzzer's argv[0]).
    def program
      @words.first
    end

    # The value of the last -+name+=VALUE, or nil.
    def value(name)
      prefix = "-#{name}="
      @words.drop(1).reverse_each { |word| return word.delete_prefix(prefix) if word.start_with?(prefix) }
      nil
    end

    # Whether -+name+=VALUE is given.
    def given?(name)
      !value(name).nil?
    end

    # The same arguments with +program+ as argv[0].
    def with_program(program)
      LibFuzzerArgs.new([program, *@words.drop(1)])
    end

    # The same arguments with each of +flags+ ("-name=value") that is not
    # given already added right after the program name.
    def with_defaults(flags)
      missing = flags.reject { |flag| given?(LibFuzzerArgs.flag_name(flag)) }
      LibFuzzerArgs.new([program, *missing, *@words.drop(1)])
    end

    # The same arguments without the flags for which the block, given the
    # flag's name and the flag, returns true (input files and directories
    # are kept).
    def reject_flags
      kept = @words.drop(1).reject do |word|
        name = LibFuzzerArgs.flag_name(word)
        name && yield(name, word)
      end
      LibFuzzerArgs.new([program, *kept])
    end

    # The same arguments with -+name+=+value+ in place of any -+name+ given.
    def with(name, value)
      prefix = "-#{name}="
      LibFuzzerArgs.new(@words.reject { |word| word.start_with?(prefix) } + ["#{prefix}#{value}"])
    end

    # -timeout in seconds (0: none); libFuzzer's default when the value is
    # not a whole number of seconds.
    def timeout
      whole_number("timeout", LIBFUZZER_DEFAULT_TIMEOUT)
    end

    # -rss_limit_mb (0: none); libFuzzer's default when the value is not a
    # whole number.
    def rss_limit_mb
      whole_number("rss_limit_mb", LIBFUZZER_DEFAULT_RSS_LIMIT_MB)
    end

    # The input files among the arguments (libFuzzer runs them instead of
    # fuzzing).
    def input_files
      @words.drop(1).reject { |word| word.start_with?("-") }.select { |word| File.file?(word) }
    end

    # The input files to run once each, when every argument that is not a
    # flag is a file (libFuzzer then runs them instead of fuzzing); else [].
    def replay_files
      paths = @words.drop(1).reject { |word| word.start_with?("-") }
      !paths.empty? && paths.all? { |path| File.file?(path) } ? paths : []
    end

    # Whether libFuzzer's value profile is on (-use_value_profile=N, N not 0).
    def value_profile?
      value("use_value_profile").to_i != 0
    end

    # Whether libFuzzer will run child processes instead of the target.
    def runs_children?
      any_set?(PARENT_FLAGS)
    end

    # Whether libFuzzer reads what each input covers as a fact
    # (COVERAGE_READING_FLAGS).
    def reads_coverage?
      any_set?(COVERAGE_READING_FLAGS)
    end

    # Whether one of the flags +names+ is given a value other than 0.
    def any_set?(names)
      names.any? do |name|
        found = value(name)
        found && found != "0"
      end
    end
    private :any_set?

    # Where libFuzzer writes the artifact named +kind+ + +sha1+ (kind is
    # "crash-", "timeout-", "oom-"); -exact_artifact_path wins unless
    # +exact+ is false.
    def artifact_path(kind, sha1, exact: true)
      path = exact && value("exact_artifact_path")
      return path if path

      "#{value("artifact_prefix") || "./"}#{kind}#{sha1}"
    end

    private

    # The value of -+name+ as a whole number, or +default+ when it is not
    # given, not one, or negative.
    def whole_number(name, default)
      number = Integer(value(name) || default.to_s, 10)
      number.negative? ? default : number
    rescue ArgumentError
      default
    end
  end
end

# frozen_string_literal: true

require "rbconfig"
require "shellwords"

module Ruzzy
  # How this process was started, so that libFuzzer can start more like it.
  #
  # libFuzzer's -fork, -jobs, -merge and -minimize_crash run `argv[0]` with
  # flags through the shell. ruzzy hands libFuzzer, as argv[0], the command
  # that started this process up to libFuzzer's own arguments (read from
  # /proc/self/cmdline): the same Ruby, its options and load path, the same
  # `ruzzy` options (coverage, sanitizer, ignore list) and the same harness
  # with its own arguments. The environment (LD_PRELOAD included) is
  # inherited.
  module Relaunch
    # The words of /proc/self/cmdline when ruzzy was loaded; assigning
    # $PROGRAM_NAME (as the ruzzy command does) rewrites them later.
    def self.read_process_words
      File.binread("/proc/self/cmdline").split("\0")
    rescue SystemCallError
      []
    end

    ORIGINAL_WORDS = read_process_words.freeze

    module_function

    # The words of the command that started this process, without the
    # trailing +libfuzzer_args+.
    def prefix(libfuzzer_args)
      words = ORIGINAL_WORDS
      tail = libfuzzer_args.size
      if words.size > tail && words.last(tail) == libfuzzer_args
        words.first(words.size - tail)
      else
        [RbConfig.ruby, File.expand_path($PROGRAM_NAME)]
      end
    end

    # Ruby's own options in the command that started this process (-Ilib
    # and -W0 of `ruby -Ilib -W0 exe/ruzzy ARGS`): the words between the
    # interpreter and +program+ when the command is that Ruby running
    # +program+ with +argv+; none when it is not known.
    def interpreter_options(program, argv)
      words = ORIGINAL_WORDS
      at = words.size - argv.size - 1
      return [] unless at >= 1 && words[at] == program && words.last(argv.size) == argv

      words[1...at]
    end

    # +words+ as one shell command line.
    def shell(words)
      Shellwords.join(words)
    end

    # +words+ without the long option +name+ ("--engine"), given as
    # --engine=VALUE or as --engine VALUE.
    def without_option(words, name)
      skip = false
      words.reject do |word|
        dropped = skip || word == name || word.start_with?("#{name}=")
        skip = word == name
        dropped
      end
    end

    # Replaces this process with the same Ruby running +args+ under
    # +environment+ (added to this one), once the output so far is out.
    def exec_ruby(environment, args)
      $stdout.flush
      $stderr.flush
      exec(environment, RbConfig.ruby, *args)
    end
  end
end

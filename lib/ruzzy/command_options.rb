# frozen_string_literal: true

# May use: error, sanitizers, settings, version.

require "etc"
require "optparse"
require_relative "version"
require_relative "sanitizers"
require_relative "settings"
require_relative "error"

module Ruzzy
  # Command-line parsing for ruzzy's commands: each builds an OptionParser
  # (Ruby's own), the options several commands share are defined here once,
  # and parse errors become a UsageError naming the command.
  module CommandOptions
    # Raised for a command line ruzzy cannot act on.
    class UsageError < StandardError
      include Ruzzy::Error
    end

    # A libFuzzer flag: one dash, a name of two or more letters, a value.
    ENGINE_FLAG = /\A-[a-z_]{2,}=/

    module_function

    # A parser for the command +name+ ("ruzzy cov"), whose -h/--help and
    # -v/--version replace OptionParser's own (which would exit).
    def parser(name)
      OptionParser.new do |parser|
        parser.program_name = name
        parser.on_tail("-h", "--help") { throw :ruzzy_usage, :help }
        parser.on_tail("-v", "--version") { throw :ruzzy_usage, :version }
      end
    end

    # -I DIRECTORY (repeatable): adds DIRECTORY, made absolute, with +block+.
    def load_path(parser, &block)
      parser.on("-I DIRECTORY") { |dir| block.call(File.expand_path(dir)) }
    end

    # --include=PATTERN and --exclude=PATTERN (repeatable), into +patterns+
    # ({ include: [], exclude: [] }).
    def coverage_patterns(parser, patterns)
      parser.on("--include=PATTERN") { |pattern| patterns[:include] << pattern }
      parser.on("--exclude=PATTERN") { |pattern| patterns[:exclude] << pattern }
    end

    # --sanitizer=NAME: yields the sanitizer's canonical name.
    def sanitizer(parser)
      parser.on("--sanitizer=NAME") { |name| yield Sanitizers.canonical(name) }
    end

    # --workers=N: yields N, a whole number of 1 or more.
    def workers(parser)
      parser.on("--workers=N") { |text| yield worker_count(text, "--workers") }
    end

    # --map-size=N: the edge counters (64 to 2^26).
    def map_size(parser)
      parser.on("--map-size=N") do |text|
        size = Integer(text, 10, exception: false)
        unless size&.between?(64, 1 << 26)
          raise CLI::UsageError, "--map-size takes a whole number from 64 to #{1 << 26}, got #{text.inspect}"
        end

        yield size
      end
    end

    # --session=N: the requests of one input of `ruzzy rack` (1 to 8).
    def session(parser)
      parser.on("--session=N") do |text|
        count = Integer(text, 10, exception: false)
        unless count&.between?(1, 8)
          raise CLI::UsageError, "--session takes a number of requests from 1 to 8, got #{text.inspect}"
        end

        yield count
      end
    end

    # The number of worker processes when no option chooses it:
    # $RUZZY_WORKERS (a whole number, 1 or more), else one per core.
    def default_workers
      text = ENV.fetch(Settings::WORKERS, "")
      text.empty? ? Etc.nprocessors : worker_count(text, Settings::WORKERS)
    end

    # What --help says of the default number of workers.
    def default_workers_text
      "$#{Settings::WORKERS}, else one per core, here #{Etc.nprocessors}"
    end

    # +text+ as a number of worker processes for the option +name+ (0
    # too with +zero+: libFuzzer's "off"); raises UsageError otherwise.
    def worker_count(text, name, zero: false)
      count = Integer(text, 10)
      raise ArgumentError if count.negative? || (count.zero? && !zero)

      count
    rescue ArgumentError, TypeError
      raise UsageError, "#{name} takes a whole number of workers, 1 or more, got #{text.inspect}"
    end

    # Parses +argv+ in place with +parser+. With in_order: true, parsing
    # stops at the first argument that is not an option (the harness:
    # everything after it is the harness's); otherwise options may stand
    # anywhere and the other arguments are left in +argv+. When --help or
    # --version was given, prints +usage+ or the version to +out+ and
    # returns true (nothing else is to be done).
    def parse!(parser, argv, out:, usage:, in_order: false)
      reject_engine_flags_before_harness(parser, argv) if in_order
      answered = catch(:ruzzy_usage) do
        in_order ? parser.order!(argv) : parser.permute!(argv)
        nil
      end
      out.write(answered == :help ? usage : "ruzzy #{VERSION}\n") if answered
      !answered.nil?
    rescue OptionParser::InvalidOption => e
      raise UsageError, "#{prefix(parser)}unknown option #{e.args.join(" ")}"
    rescue OptionParser::MissingArgument => e
      raise UsageError, "#{prefix(parser)}#{e.args.join(" ")} needs a value"
    rescue OptionParser::ParseError => e
      raise UsageError, "#{prefix(parser)}#{e.message}"
    end

    # A libFuzzer flag (-name=value) before the harness would be read as
    # an abbreviated option (-max_len=1000 as -m, --map-size): said plainly
    # instead.
    def reject_engine_flags_before_harness(parser, argv)
      argv.each do |word|
        break if word == "--" || !word.start_with?("-")
        next unless word.match?(ENGINE_FLAG)

        raise UsageError, "#{prefix(parser)}#{word} is a libFuzzer flag: it goes after the harness " \
                          "(#{parser.program_name} [options] HARNESS #{word})"
      end
    end

    # Says each of +parser+'s options in +args+ (a harness's arguments)
    # that goes to libFuzzer, which ignores it (all of them, or those after
    # a "--", before which they are the harness's own), on +err+: the run
    # would otherwise go on quietly without it.
    def warn_misplaced(parser, args, err)
      to_engine = args.include?("--") ? args.drop(args.index("--") + 1) : args
      to_engine.each do |word|
        name = word[/\A--([^=]+)/, 1] or next
        next unless [name, name.delete_prefix("no-")].any? { |long| parser.top.search(:long, long) }

        err.puts "ruzzy: #{word} comes after the harness, where it goes to libFuzzer, which ignores it: " \
                 "ruzzy's options go before the harness (ruzzy [options] #{word} HARNESS ...)"
      end
    end

    # +error+'s message as ruzzy says it: a subcommand's names it already
    # ("ruzzy findings: ...").
    def said(error) = error.message.start_with?("ruzzy ") ? error.message : "ruzzy: #{error.message}"

    def prefix(parser)
      parser.program_name == "ruzzy" ? "" : "#{parser.program_name}: "
    end
  end

  # The names every command's file uses (Ruzzy::CLI is lib/ruzzy/cli.rb).
  class CLI
    # Raised for a command line ruzzy cannot act on.
    UsageError = CommandOptions::UsageError

    # Where `ruzzy --keep-going` files findings unless --findings says.
    DEFAULT_FINDINGS_DIR = "ruzzy-findings"
  end
end

# frozen_string_literal: true

require "coverage"

module Ruzzy
  # Ruby coverage for the fuzzer: turns on the interpreter's line and branch
  # coverage events and feeds them, as edges, into libFuzzer's counters.
  #
  # Only code compiled after Coverage.start is instrumented: start it before
  # requiring the code under test (the `ruzzy` command and Ruzzy.trace do).
  module Coverage
    # Paths never instrumented: ruzzy's own files.
    OWN_FILES = "#{File.expand_path("..", __dir__)}#{File::SEPARATOR}".freeze

    module_function

    # Starts coverage. Returns true when started by this call, false when it
    # was already running (the first call's settings stay in force).
    #
    # include:: patterns of paths to instrument (default: all)
    # exclude:: patterns of paths not to instrument (ruzzy's own files always)
    # map_size:: number of edge counters (rounded up to a power of two)
    #
    # A pattern starting with "/" matches paths that start with it; any other
    # pattern matches paths that contain it ("lib/mygem/").
    def start(include: [], exclude: [], map_size: nil)
      includes = patterns(include, "include")
      excludes = patterns(exclude, "exclude") + [OWN_FILES]
      size = map_size.nil? ? Ruzzy::DEFAULT_MAP_SIZE : map_size
      unless size.is_a?(Integer) && size.between?(64, 1 << 26)
        raise InvalidArgumentsError, "map_size must be an Integer from 64 to #{1 << 26}, got #{size.inspect}"
      end

      setup_interpreter_coverage
      Ruzzy._start_coverage(size, includes, excludes)
    end

    # Whether coverage is running.
    def running?
      !Ruzzy._coverage_info.nil?
    end

    # Facts about the running coverage: :map_size, :precise (whether
    # branches on one line are told apart), :counters_ever_hit. nil when
    # coverage is not running.
    def info
      Ruzzy._coverage_info
    end

    # "path:line" of the first Ruby location that reached counter +index+.
    def location_of(index)
      Ruzzy._counter_location(index)
    end

    def patterns(value, name)
      list = Array(value)
      list.each do |pattern|
        next if pattern.is_a?(String) && !pattern.empty?

        raise InvalidArgumentsError, "#{name} patterns must be non-empty Strings, got #{pattern.inspect}"
      end
      list.map { |pattern| pattern.start_with?("~") ? File.expand_path(pattern) : pattern }
    end

    # Compiles subsequent code with coverage events, without Ruby's own
    # counting (Coverage.setup without Coverage.resume is cheaper).
    def setup_interpreter_coverage
      return if ::Coverage.running?

      if ::Coverage.respond_to?(:setup)
        ::Coverage.setup(lines: true, branches: true)
      else
        ::Coverage.start(lines: true, branches: true)
      end
    rescue RuntimeError
      # Coverage was already set up by someone else (e.g. SimpleCov): the
      # events still fire for code compiled from now on.
      nil
    end
  end
end

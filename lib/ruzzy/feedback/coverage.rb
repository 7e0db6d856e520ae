# frozen_string_literal: true

# Every file of lib/ruzzy/feedback/ stands on one floor (docs/architecture.md); this line is theirs:
# May use: campaign_protocol, error, name_list, native, own_files, settings.

require "coverage"
require "set"
require_relative "../campaign_protocol"
require_relative "../error"
require_relative "../native"
require_relative "../own_files"
require_relative "../settings"
require_relative "compare_hooks"
require_relative "literal_dictionary"
require_relative "pending_autoloads"

module Ruzzy
  # Ruby coverage for the fuzzer: turns on the interpreter's line and branch
  # coverage events and feeds them, as edges, into libFuzzer's counters.
  #
  # Only code compiled after Coverage.start is instrumented: start it before
  # requiring the code under test (the `ruzzy` command and Ruzzy.trace do).
  #
  # Branch events fire every time; line events fire once per line and
  # process (Ruby's one-shot lines): a line reached for the first time
  # counts for its method or block, and after that the branches around it
  # say what a line event would (see docs/coverage.md).
  module Coverage
    module_function

    # Starts coverage. Returns true when started by this call, false when it
    # was already running (the first call's settings stay in force).
    #
    # include:: patterns of paths to instrument (default: all)
    # exclude:: patterns of paths not to instrument (ruzzy's own files always)
    # map_size:: number of edge counters (rounded up to a power of two);
    #            nil fits the map to the instrumented code when fuzzing starts
    #
    # A pattern starting with "/" matches paths that start with it; any other
    # pattern matches paths that contain it ("lib/mygem/").
    def start(include: [], exclude: [], map_size: nil)
      includes = patterns(include, "include")
      compiled = compiled_files
      excludes = patterns(exclude, "exclude") + [OWN_FILES] + compiled
      unless map_size.nil? || (map_size.is_a?(Integer) && map_size.between?(64, 1 << 26))
        raise InvalidArgumentsError, "map_size must be an Integer from 64 to #{1 << 26}, got #{map_size.inspect}"
      end

      setup_interpreter_coverage
      started = Ruzzy::Native._start_coverage(map_size, includes, excludes)
      if started
        @compiled_before = compiled.to_set
        LiteralDictionary.start
      end
      started
    end

    # Sizes a map started without map_size to the instrumented code loaded
    # so far and the instrumented files its autoloads will load
    # (PendingAutoloads; two counters per executable line or branch arm,
    # within Ruzzy::FITTED_MAP_SIZES), before libFuzzer starts scanning it
    # after every input. Every process running the same harness gets the
    # same size, so counter ids agree across -fork, -jobs and -merge.
    # Returns the number of counters, or nil when there is nothing to fit.
    # +fuzzing+: whether inputs are generated (not only files replayed),
    # when code loaded later that outgrows the map is worth a note.
    def fit_map(fuzzing: true)
      return nil unless info&.fetch(:fitted)

      units = instrumented_units
      autoloaded = units ? PendingAutoloads.instrumented(@compiled_before || Set.new) : []
      later = autoloaded.sum { |path| code_lines(path) }
      size = Ruzzy::Native._fit_coverage(units && (units + later))
      if size
        warn "INFO: ruzzy: #{size} edge counters for #{fitted_code(units, later)} (--map-size=N to change)"
        watch_late_code(size, units + later, autoloaded) if units && fuzzing
      end
      size
    end

    # Stops Ruby's own branch counting when ruzzy set up Ruby's coverage
    # itself (not when SimpleCov or `ruzzy cov` did): fuzzing never reads
    # those counts, and counting costs about as much per branch as ruzzy's
    # own edge counters. Called when fuzzing starts; Coverage.result and
    # peek_result report no branch counts after it. Returns whether Ruby's
    # counter was stopped (false on a Ruby whose internals ruzzy does not
    # know).
    def stop_interpreter_branch_counts
      return false unless @own_interpreter_coverage && ::Coverage.running?

      Ruzzy::Native._stop_ruby_branch_counter(Ractor.current)
    end

    # Quiet coverage's seconds when RUZZY_QUIET_COVERAGE does not say: off.
    # (A web app's few instrumented methods go quiet between the rare inputs
    # that reach deeper: examples/web/rails found three of its five bugs in
    # 154 s with it, all five in 78 s without.)
    DEFAULT_QUIET_SECONDS = 0

    # The events of the TracePoint that rebuilds an iseq's instructions
    # (every iseq has one of them).
    REBUILD_EVENTS = %i[line call return b_call b_return class end].freeze

    # Quiet coverage, when fuzzing starts: the coverage events of a method
    # or block that has reached no new counter for +seconds+ are switched
    # off between inputs, and switched on again for a window at growing
    # intervals (docs/coverage.md). +seconds+ comes from
    # RUZZY_QUIET_COVERAGE (default 0, every event on; --quiet-coverage
    # sets Settings::QUIET_SECONDS). Says in an INFO line what it does; on a
    # Ruby where it cannot work (no known interpreter layout, the
    # functions it needs not exported), every event stays on. Returns
    # whether it is on.
    def quiet(seconds = quiet_seconds)
      return false unless running? && seconds.positive?

      jit = CompareHooks.yjit?
      why_not = Ruzzy::Native._quiet_coverage(seconds, rebuild_iseq, jit, jit && jit_calls_counted?)
      if why_not
        warn "INFO: ruzzy: quiet coverage unavailable (#{why_not}): every coverage event stays on"
        return false
      end
      warn "INFO: ruzzy: quiet coverage: methods and blocks that find nothing new for #{seconds} s stop " \
           "counting, and count again now and then (an experiment: --no-quiet-coverage keeps them counting)"
      true
    end

    # Under YJIT on Ruby 3.1, whether the call count YJIT compiles an iseq
    # by reads as the calls made (3 calls, then 20 more, each through
    # public_send: the interpreter counts a call it enters, not one that
    # compiled code makes), so that quiet coverage may reset the counts of
    # what YJIT threw away when it switched (docs/coverage.md); says so in
    # an INFO line when it does not. On other Rubies (nil count) YJIT
    # resets them itself.
    def jit_calls_counted?
      probe = Object.new
      def probe.ruzzy_jit_calls = nil
      iseq = RubyVM::InstructionSequence.of(probe.method(:ruzzy_jit_calls))
      counts = [3, 20].map do |calls|
        calls.times { probe.public_send(:ruzzy_jit_calls) }
        Ruzzy::Native._jit_calls(iseq)
      end
      return false if counts == [nil, nil]
      return true if counts == [3, 23]

      warn "INFO: ruzzy: under YJIT, the methods quiet coverage switches stay interpreted (YJIT's call " \
           "count reads #{counts.inspect} after 3 and 23 calls)"
      false
    end

    # RUZZY_QUIET_COVERAGE's seconds (0: off).
    def quiet_seconds
      value = ENV.fetch(Settings::QUIET_COVERAGE, DEFAULT_QUIET_SECONDS.to_s)
      seconds = Float(value, exception: false)
      return seconds.to_i == seconds ? seconds.to_i : seconds if seconds && seconds >= 0

      warn "WARNING: ruzzy: #{Settings::QUIET_COVERAGE}=#{value} is not a number of seconds; quiet coverage is off"
      0
    end

    # A callable that rebuilds one RubyVM::InstructionSequence's
    # instructions from the events it is compiled with: a TracePoint enabled
    # on it and disabled at once (ext/ruzzy/src/rb/iseq_trace.rs). Answers
    # false when Ruby refuses (no event of the TracePoint in the iseq).
    def rebuild_iseq
      point = TracePoint.new(*REBUILD_EVENTS) { nil }
      lambda do |iseq|
        point.enable(target: iseq)
        point.disable
        true
      rescue ArgumentError
        point = TracePoint.new(*REBUILD_EVENTS) { nil }
        false
      end
    end

    # What fit_map fitted the map to: +units+ (nil: not known) and +later+
    # lines in the files autoloads will load.
    def fitted_code(units, later)
      return "code of unknown size" unless units

      "#{units} lines and branch arms of instrumented code" \
        "#{" and #{later} lines in the files its autoloads will load" if later.positive?}"
    end

    # Code loaded while fuzzing (a library required on first use) shares
    # the counters fitted to the code loaded before and to the files
    # +counted+ already (PendingAutoloads.instrumented): says so, once,
    # when it outgrows them, with the size that would fit.
    def watch_late_code(size, units, counted)
      counted = counted.to_set
      @late_code&.disable
      @late_code = TracePoint.new(:script_compiled) do |point|
        path = point.eval_script ? nil : point.instruction_sequence&.absolute_path
        next unless path && Ruzzy::Native._instrumented_path?(path) && !counted.include?(path)

        units += code_lines(path)
        fitting = Ruzzy::Native._fitted_map_size(units)
        next if fitting <= size

        note = "code loaded while fuzzing (#{path} and before it) brings the instrumented code " \
               "to #{units} lines and branch arms, more than #{size} edge counters hold well: " \
               "require it before Ruzzy.fuzz, or --map-size=#{fitting}"
        warn "INFO: ruzzy: #{note}"
        warn Campaign.note_line(note) if ENV.key?(Campaign::ENV_FINDINGS_DIR)
        @late_code.disable
      rescue StandardError
        nil # a note must never become the target's exception
      end
      @late_code.enable
    end

    # Executable lines (not blank, not comments) and branch arms of the
    # instrumented files loaded so far, or nil when Ruby's coverage does
    # not list them (it was set up by someone else and is not running).
    def instrumented_units
      return nil unless ::Coverage.running?

      ::Coverage.peek_result.sum do |path, result|
        next 0 unless Ruzzy::Native._instrumented_path?(path)

        code_lines(path) + branch_arms(result)
      end
    end

    def code_lines(path)
      File.foreach(path, mode: "rb").count { |line| line.match?(/\A\s*[^\s#]/n) }
    rescue SystemCallError, IOError
      0
    end

    def branch_arms(result)
      return 0 unless result.is_a?(Hash) && result[:branches]

      result[:branches].sum { |_, arms| arms.size }
    end

    # Ruby files compiled before coverage started (ruzzy, RubyGems, what the
    # harness required first): never instrumented, so their comparisons do
    # not count either.
    def compiled_files
      $LOADED_FEATURES.select { |path| path.end_with?(".rb") && File.absolute_path?(path) }
    end

    # Whether coverage is running.
    def running?
      !Ruzzy::Native._coverage_info.nil?
    end

    # Facts about the running coverage: :map_size, :fitted (whether the map
    # is sized to the code rather than by map_size:), :precise (whether
    # branches on one line are told apart), :counters_ever_hit. nil when
    # coverage is not running.
    def info
      Ruzzy::Native._coverage_info
    end

    # "path:line" of the first Ruby location that reached counter +index+.
    def location_of(index)
      Ruzzy::Native._counter_location(index)
    end

    def patterns(value, name)
      list = Array(value)
      list.each do |pattern|
        next if pattern.is_a?(String) && !pattern.empty?

        raise InvalidArgumentsError, "#{name} patterns must be non-empty Strings, got #{pattern.inspect}"
      end
      list.map { |pattern| pattern.start_with?("~") ? File.expand_path(pattern) : pattern }
    end

    # Compiles subsequent code with coverage events: branches, and one-shot
    # lines, whose event Ruby's own line counter turns off after its first
    # time (so Ruby's counting runs, unlike with Coverage.setup alone; its
    # branch counting stops when fuzzing starts, see
    # stop_interpreter_branch_counts).
    def setup_interpreter_coverage
      return if ::Coverage.running?

      ::Coverage.setup(oneshot_lines: true, branches: true)
      ::Coverage.resume
      @own_interpreter_coverage = true
    rescue RuntimeError
      # Coverage was already set up by someone else (e.g. SimpleCov): the
      # events still fire for code compiled from now on.
      nil
    end

    private_class_method :instrumented_units, :code_lines, :branch_arms, :compiled_files, :patterns,
                         :setup_interpreter_coverage, :rebuild_iseq
  end
end

# frozen_string_literal: true

require "fileutils"
require "tmpdir"
require_relative "identity"
require_relative "reproduction"
require_relative "store"
require_relative "../finding_kinds"
require_relative "../libfuzzer_args"

module Ruzzy
  module Findings
    # Shrinks one group's input (`ruzzy findings minimise`): rounds of
    # libFuzzer's own minimising step (`-minimize_crash_internal_step=1`:
    # mutate the input into smaller ones, stop at the first that fails,
    # write it to -exact_artifact_path), each from the smallest input so far
    # with a seed of its own; the input a round ends with is run again alone,
    # and that run's report says which group it belongs to.
    #
    # Why not libFuzzer's -minimize_crash: it stops for good at the first
    # smaller input that fails with another DEDUP_TOKEN, though a smaller
    # input that fails the same way is often a few mutations away. Here that
    # input is another finding, filed in the store as the campaign files
    # one, and the next round starts again from the same input.
    #
    # Invariants: the group's input is only replaced by a smaller one whose
    # own run failed with the group's identity (Store#offer_smaller), and a
    # hang is filed (the group's or another) only from a run that hung past
    # the campaign's hang threshold: a -timeout shorter than it only makes
    # the rounds find candidates sooner, and an input that finishes within
    # the threshold is a slow input, not a hang; every
    # child process is bounded (-runs, -max_total_time, and the -timeout of
    # the flags it is given); it stops when PATIENCE rounds in a row gave
    # nothing smaller that fails the same way, when the -runs (or
    # -max_total_time) budget is spent, or at a 1-byte input, and says
    # which (Stop). The time budget counts from Minimiser.new; a round of a
    # hang, which runs its inputs for their whole -timeout and the smaller
    # one alone for the hang threshold, starts only while it fits in what
    # is left (the first round always runs), so the command ends within the
    # budget plus at most one such round.
    class Minimiser
      # Rounds in a row without a smaller input of the group before it stops:
      # a round that met another bug ended early, so one is weak evidence.
      PATIENCE = 8
      # Seconds a round may fuzz when no budget of time is given: a round
      # stuck on slow inputs ends and counts as one without a smaller input.
      ROUND_SECONDS = 60
      # The largest seed libFuzzer takes (an unsigned int; 0 means "random").
      MAX_SEED = (2**31) - 1

      # Inputs tried in all unless -runs=N says otherwise.
      DEFAULT_RUNS = 20_000
      # The flags that set the budget and the first seed, taken out of those
      # passed on to libFuzzer.
      OWN_FLAGS = %w[runs max_total_time seed].freeze

      # Why minimising stopped: :patience (+rounds+ rounds in a row, +runs+
      # inputs, gave nothing smaller that fails the same way), :runs or
      # :seconds (that budget, +budget+, is spent), :round_too_long (what is
      # left of it is shorter than a round of the hang, +round+ seconds),
      # :smallest (a 1-byte input: libFuzzer tries nothing smaller).
      Stop = Struct.new(:reason, :rounds, :runs, :budget, :round, keyword_init: true) do
        def to_s
          case reason
          when :patience then "nothing smaller failed the same way in #{rounds} rounds in a row (#{runs} inputs tried)"
          when :runs then "the budget of #{budget} runs is spent (-runs=N for more)"
          when :seconds then "the budget of #{budget} seconds is spent (-max_total_time=N for more)"
          when :round_too_long
            "what is left of the budget of #{budget} seconds is shorter than a round of this hang " \
            "(up to #{round} s: the -timeout, then the hang threshold for the smaller input alone; " \
            "-max_total_time=N for more, -timeout=N for shorter rounds)"
          else "the input is 1 byte, and libFuzzer tries nothing smaller"
          end
        end
      end
      # A smaller input that failed another way: its +identity+, its size
      # (+bytes+), what the store made of it (+outcome+: Store#record's),
      # and the site of the group being minimised (+site+, or nil): an
      # exception raised there too, by another caller, is often the same
      # bug (grouped apart by its frames, as ClusterFuzz groups them).
      Other = Struct.new(:identity, :bytes, :outcome, :group, keyword_init: true) do
        def to_s
          size = "#{bytes} byte#{"s" unless bytes == 1}"
          filed = case outcome
                  when :new then "a new group, #{size}"
                  when :smaller then "a smaller input for its group, #{size}"
                  else "on file already, with an input no larger; met with #{size}"
                  end
          "#{identity.group} #{identity.title} (#{filed}#{same_site})"
        end

        # The group's own line, where another exception (or the same one,
        # through other callers) may be the same bug.
        def same_site
          return "" unless group.site && identity.site == group.site
          return "; raised at #{group.site} too, by other callers: maybe the same bug" if same_class?

          "; another exception raised at #{group.site}: maybe the same bug"
        end

        def same_class? = identity.token.split("--").first == group.token.to_s.split("--").first
      end
      # How minimising ended: +stop+, or +failure+ (the output of a round
      # that ran no input, or failed and wrote none) when it could not go on.
      Outcome = Struct.new(:stop, :failure, keyword_init: true)

      # The budget and first seed of libFuzzer's flags +argv+, and the flags
      # passed on to every run: +runs+ (-runs=N, DEFAULT_RUNS when not
      # given), +seconds+ (-max_total_time=N; nil), +seed+ (-seed=N; random
      # when not given or 0), +flags+. Raises ArgumentError for a word that
      # is not a flag or a budget that is not a number.
      def self.options(argv)
        own = {}
        flags = argv.reject do |word|
          name = LibFuzzerArgs.flag_name(word) or raise ArgumentError, "#{word} is not a libFuzzer flag (-name=value)"
          next false unless OWN_FLAGS.include?(name)

          own[name] = Integer(word.delete_prefix("-#{name}="), 10, exception: false) or
            raise ArgumentError, "#{word}: not a number"
        end
        seed = own["seed"].to_i.positive? ? own["seed"] : Random.rand(1..MAX_SEED)
        { runs: own.fetch("runs", DEFAULT_RUNS).clamp(1..), seconds: own["max_total_time"]&.clamp(1..), seed:, flags: }
      end

      # +group+ of +store+, run by +reproduction+ with libFuzzer's +flags+
      # (its -timeout among them); a smaller input is run alone with the
      # campaign's +hang_seconds+ as its -timeout; +runs+ inputs in all, at
      # most +seconds+ (nil: no limit), rounds seeded from +seed+ on.
      def initialize(store:, group:, reproduction:, flags:, hang_seconds:, runs:, seconds:, seed:)
        @store = store
        @group = group
        @reproduction = reproduction
        @flags = flags
        @hang_seconds = hang_seconds
        @runs = runs
        @deadline = seconds && (now + seconds)
        @seconds = seconds
        @round_seconds = hang_round_seconds
        # Each round's -seed drawn from +seed+: libFuzzer's generator
        # (minstd_rand) given consecutive seeds starts with near-identical
        # numbers, and so the same first mutations.
        @seeds = Random.new(seed)
        # Half the budget spent without a smaller input of the group stops it.
        @round_runs = [(runs / (2.0 * PATIENCE)).ceil, 1].max
      end

      # Minimises; yields each Other as it is filed; returns the Outcome.
      def run(&)
        Dir.mktmpdir("ruzzy-minimise") do |tmp|
          @tmp = tmp
          best = File.join(tmp, "best")
          File.binwrite(best, File.binread(@group.input_path))
          rounds(best, &)
        end
      end

      private

      def rounds(best, &)
        spent = fruitless = tried = 0
        loop do
          stop = stop(File.size(best), spent, fruitless, tried) || too_long_for(spent)
          return Outcome.new(stop:) if stop

          allotted = [@round_runs, @runs - spent].min
          output, status, candidate = step(best, allotted, @seeds.rand(1..MAX_SEED))
          used = output[/^stat::number_of_executed_units: *(\d+)/, 1]&.to_i || allotted
          spent += used
          tried += used
          # A run that failed yet wrote no input did not run the input (the
          # harness did not load, a flag was refused) or died unreported.
          return Outcome.new(failure: output) unless candidate || status.success?

          if candidate && smaller_of_the_group?(candidate, File.size(best), &)
            File.binwrite(best, candidate)
            fruitless = tried = 0
          else
            fruitless += 1
          end
        end
      end

      # The Stop due before the next round, if any.
      def stop(bytes, spent, fruitless, tried)
        if bytes < 2 then Stop.new(reason: :smallest)
        elsif fruitless >= PATIENCE then Stop.new(reason: :patience, rounds: fruitless, runs: tried)
        elsif spent >= @runs then Stop.new(reason: :runs, budget: @runs)
        elsif @deadline && now >= @deadline then Stop.new(reason: :seconds, budget: @seconds)
        end
      end

      # Stop for a round of a hang that would end past the deadline; never
      # before the first round (+spent+ inputs so far).
      def too_long_for(spent)
        return unless @deadline && @round_seconds && spent.positive? && now + @round_seconds > @deadline

        Stop.new(reason: :round_too_long, budget: @seconds, round: @round_seconds)
      end

      # How long a round of a hang can take, or nil for another group: its
      # step ends when a mutated input has hung for the -timeout (the last
      # of the flags), and the run of that input alone for the hang
      # threshold.
      def hang_round_seconds
        return unless Findings.hang?(@group.kind)

        timeout = Integer(LibFuzzerArgs.new(["ruzzy", *@flags]).value("timeout").to_s, 10, exception: false)
        timeout && (timeout + @hang_seconds)
      end

      # One round of libFuzzer's minimising step on the input at +best+:
      # its output, its status and the smaller input it failed with (nil
      # when none failed).
      def step(best, runs, seed)
        artifact = File.join(@tmp, "step")
        FileUtils.rm_f(artifact)
        seconds = @deadline ? (@deadline - now).ceil.clamp(1, ROUND_SECONDS) : ROUND_SECONDS
        output, status = @reproduction.run(*@flags, "-minimize_crash_internal_step=1",
                                           "-exact_artifact_path=#{artifact}", "-runs=#{runs}", "-seed=#{seed}",
                                           "-max_total_time=#{seconds}", best)
        [output, status, !status.success? && File.file?(artifact) ? File.binread(artifact) : nil]
      end

      # Runs +input+ alone: whether it fails as the group does and is
      # smaller than +bytes+ (then it is offered to the store); if it fails
      # another way it is recorded as that group's finding and yielded.
      def smaller_of_the_group?(input, bytes)
        identity, report = identify(input)
        return false unless identity

        if identity.group == @group.name
          return false unless input.bytesize < bytes

          @store.offer_smaller(identity, input, report, alone: "fails")
          return true
        end
        outcome = @store.record(identity, input, report, alone: "fails")
        other = Other.new(identity:, bytes: input.bytesize, outcome:, group: @group)
        yield other if block_given?
        false
      end

      # The identity of +input+ run alone, with its report as the store files
      # it; nil when it passes (or did not run). It runs with the hang
      # threshold as its -timeout, whatever the rounds' is: a hang is an
      # input that runs past it.
      def identify(input)
        path = File.join(@tmp, "input")
        File.binwrite(path, input)
        output, status = @reproduction.run(*@flags, "-timeout=#{@hang_seconds}", path)
        return nil if status.success? || !Reproduction.ran?(status, output)

        identity = Identity.of_report(output)
        [identity, @reproduction.filed_in(output, from: path, dir: @store.dir, group: identity.group)]
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end

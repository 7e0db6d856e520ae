# frozen_string_literal: true

require_relative "generators"
require_relative "literal"
require_relative "schema"

module Ruzzy
  module Gen
    # The generators of a typed target, one per argument: fuzz inputs and
    # regression files become argument lists, and back.
    class Arguments
      # How many target calls a finding's shrinking may make.
      SHRINK_CALLS = 2_000

      attr_reader :gens

      def initialize(gens, where)
        gens.each { |gen| Gen.check!(gen, where) }
        @gens = gens.freeze
      end

      # The trees of the fuzz input +data+ (any bytes).
      def decode(data)
        reader = ByteReader.new(data)
        @gens.map { |gen| gen.read(reader, UNLIMITED) }
      end

      # The arguments of the fuzz input +data+ (the trees are not kept: the
      # per-input path).
      def decode_values(data)
        reader = ByteReader.new(data)
        @gens.map { |gen| gen.value(gen.read(reader, UNLIMITED)) }
      end

      # The fuzz input whose trees are +trees+.
      def encode(trees)
        writer = ByteWriter.new
        @gens.each_with_index { |gen, index| gen.write(trees[index], writer, UNLIMITED) }
        writer.data
      end

      # The generators described for the native structure-aware mutator
      # (Schema.of).
      def schema = Schema.of(@gens)

      # The arguments the target gets.
      def values(trees) = @gens.each_with_index.map { |gen, index| gen.value(trees[index]) }

      # The regression file of +trees+.
      def dump(trees) = Literal.dump_file(@gens.each_with_index.map { |gen, index| gen.literal(trees[index]) })

      # The trees of the regression file +text+ (read from +path+); raises
      # RegressionFileError naming the file and line when a value does not
      # fit its generator.
      def load(text, path)
        lines = Literal.parse_file(text, path)
        if lines.size != @gens.size
          raise RegressionFileError, "#{path}: #{lines.size} values for #{@gens.size} arguments"
        end

        @gens.zip(lines).each_with_index.map do |(gen, (line, literal)), index|
          tree = gen.tree(literal)
          next tree unless tree.nil?

          raise RegressionFileError, "#{path}:#{line}: #{Literal.dump(literal)} does not fit the generator of " \
                                     "argument #{index + 1} (#{gen.class.name.split("::").last})"
        end
      end

      # The trees of a corpus file: a regression file is parsed, anything
      # else decoded.
      def read_file(path)
        text = File.binread(path)
        Literal.file?(text) ? load(text, path) : decode(text)
      end

      # Smaller +trees+ for which the block still returns true (greedy: each
      # argument's shrinks, smallest first, until none helps or the budget
      # of calls or +seconds+ are spent). Returns the trees and the number of calls
      # made.
      def shrink(trees, seconds:)
        calls = 0
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
        loop do
          improved = false
          @gens.each_with_index do |gen, index|
            gen.shrinks(trees[index]).each do |smaller|
              return [trees, calls] if calls >= SHRINK_CALLS ||
                                       Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

              candidate = trees.dup.tap { |copy| copy[index] = smaller }
              calls += 1
              next unless yield candidate

              trees = candidate
              improved = true
              break
            end
          end
          return [trees, calls] unless improved
        end
      end
    end
  end
end

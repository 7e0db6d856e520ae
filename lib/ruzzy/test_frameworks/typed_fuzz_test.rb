# frozen_string_literal: true

require "digest/sha1"
require "fileutils"
require "tmpdir"
require_relative "../gen"

module Ruzzy
  module FuzzTest
    # Fuzzing a typed fuzz test (one declared with generators). Its
    # findings are saved into the corpus directory as readable regression
    # files (finding-<sha1>, `ruzzy fuzz v1`), which the ordinary test run
    # replays; libFuzzer's own crash files (the raw bytes) go beside them
    # as hidden files (.crash-<sha1>), which it does not.
    module TypedFuzzTest
      module_function

      # Fuzzes +definition+ (never returns); the block runs in +receiver+.
      def fuzz!(definition, receiver)
        require "ruzzy"
        arguments = definition.arguments
        given = Ruzzy::DEFAULT_ARGS.drop(1).map { |word| as_input(arguments, word) }
        block = definition.block
        # A replay of input files prints a finding's shrunk arguments but
        # saves nothing: it runs the inputs, never adds to the corpus.
        saver = FuzzTest.replaying?(given) ? nil : ->(text) { save(definition, text) }
        target = Gen::TypedTarget.typed(block, arguments, Ruzzy.session, on_finding: saver) do |values|
          receiver.instance_exec(*values, &block)
          nil
        end
        args = Gen::TypedTarget.with_flags(FuzzTest.fuzz_args(definition, given, "#{definition.corpus}/."), arguments)
        Ruzzy.fuzz(target, args:, ignore: definition.expected.to_specs)
      end

      # `ruzzy convert`: each input file on the command line (ARGV) in the
      # other form, into +out+ ("." for the corpus directory): a regression
      # file as the bytes that decode to its values (named after their
      # SHA-1, as libFuzzer names corpus files), any other file as a
      # regression file (named after its text's SHA-1). Prints each path
      # written, then ends the process (the test framework runs nothing).
      def convert!(definition, out)
        unless definition.arguments
          raise ArgumentError, "fuzz test #{definition.name.inspect} is not typed: its inputs are bytes already"
        end

        out = definition.corpus if out == "."
        FileUtils.mkdir_p(out)
        ARGV.each { |path| $stdout.puts "#{path} -> #{convert_file(definition.arguments, path, out)}" }
        $stdout.flush
        exit!(0)
      end

      def convert_file(arguments, path, out)
        raise ArgumentError, "no such input file: #{path}" unless File.file?(path)

        trees = arguments.read_file(path)
        if Gen::Literal.file?(File.binread(path))
          bytes = arguments.encode(trees)
          File.join(out, Digest::SHA1.hexdigest(bytes)).tap { |target| File.binwrite(target, bytes) }
        else
          text = arguments.dump(trees)
          File.join(out, "input-#{Digest::SHA1.hexdigest(text)[0, 16]}").tap { |target| File.write(target, text) }
        end
      end

      # Writes the regression file +text+ into the corpus directory, named
      # after its contents; returns its path.
      def save(definition, text)
        path = File.join(definition.corpus, "finding-#{Digest::SHA1.hexdigest(text)[0, 16]}")
        File.write(path, text) unless File.exist?(path)
        path
      end

      # A command-line word, with a regression file replaced by a temporary
      # file of the bytes that decode to its values (libFuzzer reads bytes).
      def as_input(arguments, word)
        return word if word.start_with?("-") || !File.file?(word)
        return word unless Gen::Literal.file?(File.binread(word))

        bytes = arguments.encode(arguments.read_file(word))
        path = File.join(Dir.tmpdir, "ruzzy-input-#{Digest::SHA1.hexdigest(bytes)}")
        File.binwrite(path, bytes)
        path
      end
    end
  end
end

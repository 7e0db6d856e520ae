# frozen_string_literal: true

require "fileutils"
require_relative "../command_options"

module Ruzzy
  module Campaign
    # The corpus directories a campaign is given among the harness's
    # arguments. The first one, which receives new inputs, is created when
    # it does not exist yet (as libFuzzer creates it); the others are read
    # and must exist; an existing file is an input file, which a campaign
    # does not take.
    module CorpusDirs
      module_function

      # The absolute paths of the corpus directories among +words+ (the
      # harness's arguments: libFuzzer flags start with "-"), the first
      # created when missing; raises CommandOptions::UsageError otherwise.
      def given(words)
        dirs = words.reject { |word| word.start_with?("-") }.map { |dir| File.expand_path(dir) }
        dirs.each_with_index do |dir, index|
          next if File.directory?(dir)

          if File.exist?(dir)
            raise CommandOptions::UsageError, "--keep-going takes corpus directories, not input files (#{dir}); " \
                                              "replay inputs without --keep-going"
          end
          raise CommandOptions::UsageError, "--keep-going: no such corpus directory #{dir}" unless index.zero?

          create(dir)
        end
      end

      # Moves each file of +dirs+ whose content is +input+ into +into+ (as
      # from-corpus-NAME); returns their paths.
      def set_aside(dirs, input, into)
        dirs.flat_map { |dir| Dir.glob(File.join(dir, "*")) }.select do |file|
          next false unless File.file?(file) && File.size(file) == input.bytesize && File.binread(file) == input

          FileUtils.mv(file, File.join(into, "from-corpus-#{File.basename(file)}"))
          true
        end
      end

      def create(dir)
        FileUtils.mkdir_p(dir)
      rescue SystemCallError => e
        raise CommandOptions::UsageError, "--keep-going: cannot create the corpus directory #{dir}: #{e.message}"
      end
    end
  end
end

# frozen_string_literal: true

require "fileutils"
require_relative "../cli/command_options"

module Ruzzy
  module Campaign
    # The corpus directories a campaign is given among the harness's
    # arguments. One that does not exist yet is created (a new corpus, as
    # libFuzzer creates its first corpus directory); an existing file is an
    # input file, which a campaign does not take.
    module CorpusDirs
      module_function

      # The absolute paths of the corpus directories among +words+ (the
      # harness's arguments: libFuzzer flags start with "-"), created when
      # missing; raises CommandOptions::UsageError for an input file.
      def given(words)
        words.reject { |word| word.start_with?("-") }.map { |dir| File.expand_path(dir) }.each do |dir|
          next if File.directory?(dir)

          if File.exist?(dir)
            raise CommandOptions::UsageError, "--keep-going takes corpus directories, not input files (#{dir}); " \
                                              "replay inputs without --keep-going"
          end
          create(dir)
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

# frozen_string_literal: true

require_relative "report"

module Ruzzy
  module Detectors
    # Path traversal and arbitrary file access: a file or directory call
    # (File.open/new and Kernel#open, IO.read/write/binread/binwrite/
    # readlines/foreach, File.delete/unlink/rename/symlink/link/truncate,
    # Dir.entries/children/each_child/glob/[]/mkdir/rmdir/unlink/delete/
    # open/new; FileUtils and Pathname go through these) given a path that
    # walks out through "../" + CANARY, or the absolute path "/" + CANARY.
    # A path that stays where the program put it (File.join(dir,
    # File.basename(name))) never has either.
    class PathTraversal < Report
      NAME = :path_traversal
      SUMMARY = "paths that walk out of their directory (../) or are absolute, chosen by the input"

      # The canary in the places a traversal puts it.
      WORDS = ["../#{CANARY}", "/#{CANARY}", "../"].freeze

      # [target, label, {which arguments are paths (how many lead, or :all)
      # => methods}].
      SINKS = [
        [File, "File.", { 1 => %i[initialize] }],
        [IO.singleton_class, "IO.", { 1 => %i[read binread readlines foreach write binwrite] }],
        [File.singleton_class, "File.", { all: %i[delete unlink], 2 => %i[rename symlink link], 1 => %i[truncate] }],
        [Dir.singleton_class, "Dir.", { 1 => %i[entries children each_child glob mkdir rmdir unlink delete],
                                        all: %i[[]] }],
        [Dir, "Dir.", { 1 => %i[initialize] }]
      ].freeze

      class << self
        def install
          SINKS.each do |target, label, rules|
            rules.each do |paths, methods|
              Detectors.hook(target, label, methods, ->(sink, args) { check(sink, args, paths) })
            end
          end
        end

        # Checks the path arguments of one call (+paths+: how many lead, or
        # :all).
        def check(sink, args, paths)
          sink = sink.sub(/initialize\z/, "new")
          (paths == :all ? args : args.first(paths)).each do |arg|
            Array(arg).each { |path| check_path(sink, Detectors.path_string(path)) }
          end
        end

        def check_path(sink, path)
          return unless path

          Detectors.guide(path, WORDS)
          return unless path.include?(CANARY) && escapes?(path)

          Detectors.report(new("path traversal: #{sink} got #{path.inspect}, a path of the input's choosing " \
                               "outside its directory", sink))
        end

        # Whether +path+ reaches the canary through "..", or is the
        # absolute canary path.
        def escapes?(path)
          segments = path.split(%r{/+}, -1)
          return true if path.start_with?("/") && segments[1] == CANARY

          segments.each_cons(2).any? { |parent, name| parent == ".." && name == CANARY }
        end
      end
    end
  end
end

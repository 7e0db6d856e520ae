# frozen_string_literal: true

require_relative "report"

module Ruzzy
  module Detectors
    # Path traversal and arbitrary file access: a file or directory call
    # (File.open/new and Kernel#open, IO.read/write/binread/binwrite/
    # readlines/foreach, File.delete/unlink/rename/symlink/link/truncate,
    # Dir.entries/children/each_child/glob/[]/mkdir/rmdir/unlink/delete/
    # open/new; FileUtils and Pathname go through these) or a probe of a
    # path (File.exist?/file?/directory?/readable?/size?/stat/lstat/mtime/
    # realpath and the rest of PROBES, FileTest's, Dir.exist?/empty?,
    # File::Stat.new) given a path that walks out through "../" + CANARY,
    # or the absolute path "/" + CANARY. A path that stays where the
    # program put it (File.join(dir, File.basename(name))) never has either.
    #
    # Probes count because the canary exists nowhere: code that checks a
    # file before opening it (Sinatra's send_file asks File.mtime, a static
    # file handler File.file?) would answer "not found" before any open.
    # Such a probe is itself a leak: the input learns which files exist.
    class PathTraversal < Report
      NAME = :path_traversal
      SUMMARY = "paths that walk out of their directory (../) or are absolute, chosen by the input"

      # The canary in the places a traversal puts it.
      WORDS = ["../#{CANARY}", "/#{CANARY}", "../"].freeze
      # The canary as a whole segment after a ".." segment, or as the
      # first segment of an absolute path ("//" is "/"); an extension the
      # program appends to the name it was given (`ruzzy.md`) is part of it.
      ESCAPE = %r{\A/+#{CANARY}(?:[/.]|\z)|(?:\A|/)\.\./+#{CANARY}(?:[/.]|\z)}

      # Where the hooks' own frames are (detectors.rb, detectors/*.rb).
      HOOKS = File.join(File.dirname(__dir__), "detectors")
      # RubyGems' require (which newer RubyGems show as <internal:...>).
      REQUIRE_FILE = %r{/rubygems/core_ext/kernel_require\.rb>?\z}

      # What File and FileTest answer about a path without opening it (the
      # methods a class lacks are skipped).
      PROBES = %i[exist? file? directory? readable? readable_real? world_readable? writable? writable_real?
                  world_writable? executable? executable_real? size size? zero? empty? symlink? pipe? socket?
                  blockdev? chardev? owned? grpowned? setuid? setgid? sticky? stat lstat mtime atime ctime
                  birthtime ftype realpath realdirpath readlink].freeze

      # [target, label, {which arguments are paths (how many lead, or :all)
      # => methods}].
      SINKS = [
        [File, "File.", { 1 => %i[initialize] }],
        [IO.singleton_class, "IO.", { 1 => %i[read binread readlines foreach write binwrite] }],
        [File.singleton_class, "File.", { all: %i[delete unlink], 2 => %i[rename symlink link identical?],
                                          1 => [:truncate, *PROBES] }],
        [FileTest.singleton_class, "FileTest.", { 1 => PROBES, 2 => %i[identical?] }],
        [File::Stat, "File::Stat.", { 1 => %i[initialize] }],
        [Dir.singleton_class, "Dir.", { 1 => %i[entries children each_child glob mkdir rmdir unlink delete
                                                exist? empty?],
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
        # :all); a call with one path (most are) copies no arguments.
        def check(sink, args, paths)
          return check_arg(sink, args.first) if paths == 1

          (paths == :all ? args : args.first(paths)).each { |arg| check_arg(sink, arg) }
        end

        # One path argument: a path, or an Array of them (Dir.glob).
        def check_arg(sink, arg)
          return check_path(sink, Detectors.path_string(arg)) unless arg.is_a?(Array)

          arg.each { |path| check_path(sink, Detectors.path_string(path)) }
        end

        def check_path(sink, path)
          return unless path

          Detectors.guide(path, WORDS)
          return unless path.include?(CANARY) && escapes?(path)

          return if load_path_search?

          sink = sink.sub(/initialize\z/, "new")
          Detectors.report(new("path traversal: #{sink} got #{path.inspect}, a path of the input's choosing " \
                               "outside its directory", sink))
        end

        # Whether the probe is RubyGems' require looking for a file along
        # $LOAD_PATH (File.symlink? and File.file? of each entry): the
        # program's load path, not its input, even where an entry is written
        # with "..".
        def load_path_search?
          caller = caller_locations.find { |location| !location.path.to_s.start_with?(HOOKS) }
          caller&.path.to_s.match?(REQUIRE_FILE)
        end

        # Whether +path+ reaches the canary through "..", or is the
        # absolute canary path (one match, nothing allocated: paths with
        # the canary's letters in them are common, "/home/ruzzy/...").
        def escapes?(path)
          path.match?(ESCAPE)
        end
      end
    end
  end
end

# frozen_string_literal: true

require "set"
require_relative "../native"

module Ruzzy
  module Coverage
    # The Ruby files that `autoload`s registered so far will load when
    # their constant is first used, and that are not loaded yet: a library
    # that loads its parsers and converters on first use (kramdown,
    # Rack, Active Support) has most of its code there when fuzzing
    # starts. Coverage.fit_map counts them, so that the map holds the code
    # that will come.
    #
    # Invariants: nothing is loaded; the answer depends only on what is
    # loaded and on the load path, so every process running the same harness
    # gets the same files.
    module PendingAutoloads
      module_function

      # Absolute paths of the pending autoloads' files, sorted; with a
      # block, only those of autoloads registered by a file the block
      # accepts (given its path): a library's own, not RubyGems' (which
      # registers a dozen of its own files before any harness runs).
      def paths(&)
        features(&).filter_map { |feature| resolve(feature) }.uniq.sort
      end

      # The instrumented files (Native._instrumented_path?) that the
      # autoloads registered so far will load, of those registered by code
      # loaded after coverage started (a library's own; Zeitwerk's, for a
      # Rails app's classes), not by the files +compiled_before+ it
      # (RubyGems registers a dozen of its own files, which no target uses).
      def instrumented(compiled_before)
        paths { |registered_in| !compiled_before.include?(registered_in) }
          .select { |path| Ruzzy::Native._instrumented_path?(path) }
      end

      # The features (`autoload :Html, "kramdown/parser/html"`: the second
      # argument) of every module's constants not loaded yet, registered by
      # a file the block accepts (any, without a block).
      def features
        found = Set.new
        ObjectSpace.each_object(Module) do |mod|
          constants_of(mod).each do |name|
            feature = pending(mod, name)
            next unless feature && (!block_given? || yield(registered_in(mod, name).to_s))

            found << feature
          end
        end
        found
      end

      # The file whose `autoload` call registered +mod+'s +name+, or nil.
      def registered_in(mod, name)
        location = Module.instance_method(:const_source_location).bind_call(mod, name)
        location.is_a?(Array) ? location.first : nil
      rescue StandardError
        nil
      end

      # A module's own constants; none where the module will not say (a
      # module whose #constants is redefined or raises).
      def constants_of(mod)
        names = Module.instance_method(:constants).bind_call(mod, false)
        names.is_a?(Array) ? names : []
      rescue StandardError
        []
      end

      # The feature +mod+'s +name+ autoloads, or nil when it is loaded or no
      # autoload.
      def pending(mod, name)
        feature = Module.instance_method(:autoload?).bind_call(mod, name, false)
        feature.is_a?(String) ? feature : nil
      rescue StandardError
        nil
      end

      # The Ruby file +feature+ names on the load path, or nil (a C
      # extension, a feature not found, one loaded already).
      def resolve(feature)
        kind, path = $LOAD_PATH.resolve_feature_path(feature)
        return nil unless kind == :rb && path && File.file?(path)
        return nil if $LOADED_FEATURES.include?(path)

        path
      rescue LoadError, StandardError
        nil
      end
    end
  end
end

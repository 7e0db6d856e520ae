# frozen_string_literal: true

require "rbconfig"
require_relative "check"
require_relative "../sanitizers"

module Ruzzy
  module Extensions
    # Under a sanitizer preload, the extensions the harness loaded from the
    # project (the working directory) or from a gem directory that were not
    # built for fuzzing (Check): their C code runs unchecked or unseen, which
    # a user who asked for --sanitizer means to know. Ruby's own extensions
    # and ruzzy's are left alone.
    module LoadedCheck
      module_function

      # The sanitizer whose ruzzy preload is in LD_PRELOAD, or nil.
      def preloaded_sanitizer(env = ENV)
        preloads = env.fetch("LD_PRELOAD", "").split(/[:\s]+/).map { |path| File.basename(path) }
        Sanitizers::FILES.find { |_, file| preloads.include?(file) }&.first
      end

      # One warning line per loaded extension that lacks something.
      def warnings(features = $LOADED_FEATURES, env = ENV)
        sanitizer = preloaded_sanitizer(env) or return []
        Check.report(suspects(features), sanitizer).map do |line|
          "WARNING: ruzzy: #{line}: its C code is fuzzed without the sanitizer's checks or libFuzzer's coverage; " \
            "rebuild it with `ruzzy build-ext` (docs/c-extensions.md)"
        end
      end

      def suspects(features)
        roots = [Dir.pwd, *Gem.path].map { |dir| File.join(File.expand_path(dir), "") }
        own = [RbConfig::CONFIG["rubylibprefix"], RbConfig::CONFIG["rubyarchdir"], Sanitizers.native_dir,
               File.expand_path("../..", __dir__)].compact.map { |dir| File.join(File.expand_path(dir), "") }
        features.select do |path|
          path.end_with?(".so") && roots.any? { |root| path.start_with?(root) } &&
            own.none? { |dir| path.start_with?(dir) } && File.file?(path)
        end
      end
    end
  end
end

# frozen_string_literal: true

require "rbconfig"
require_relative "error"
require_relative "exit_status"

module Ruzzy
  # Where ruzzy's native files are, and loading the extension from there.
  #
  # A gem built from source (`gem install ruzzy`) compiles them for the Ruby
  # installing it into lib/ruzzy/. The precompiled x86_64-linux gem carries
  # one set per Ruby version in lib/ruzzy/<major.minor>/ and loads the one
  # for RUBY_VERSION, as rake-compiler's "fat" gems do. This file loads no
  # native code itself, so the `ruzzy` command can use it before
  # re-executing itself under a sanitizer preload.
  module Native
    # The Ruby version the precompiled set must match ("3.4").
    RUBY_MINOR = RUBY_VERSION[/\A\d+\.\d+/]
    EXTENSION = "ruzzy_ext.#{RbConfig::CONFIG.fetch("DLEXT", "so")}".freeze

    module_function

    # The directory holding the extension built for this Ruby, or nil.
    def dir
      candidates = [File.join(__dir__, RUBY_MINOR), __dir__] + $LOAD_PATH.map { |path| File.join(path, "ruzzy") }
      candidates.find { |candidate| File.file?(File.join(candidate, EXTENSION)) }
    end

    # The Ruby versions a precompiled gem carries extensions for.
    def precompiled_versions
      Dir.glob(File.join(__dir__, "*", EXTENSION)).map { |path| File.basename(File.dirname(path)) }.sort
    end

    # Requires the extension; a LoadError that says what to do when there is
    # none for this Ruby.
    def require_extension
      found = dir
      return require(File.join(found, EXTENSION)) if found

      versions = precompiled_versions
      raise LoadError, "ruzzy has no native extension for Ruby #{RUBY_VERSION}" +
                       (if versions.empty?
                          ": reinstall it so it is built for this Ruby (gem pristine ruzzy)"
                        else
                          " (this precompiled gem has #{versions.join(", ")}); install the source gem " \
                            "instead: gem install ruzzy --platform ruby"
                        end)
    end
  end
end

# frozen_string_literal: true

# May use: error, exit_status, finding_kinds, platforms, settings.

require "rbconfig"
require_relative "error"
require_relative "exit_status"
require_relative "finding_kinds"
require_relative "platforms"
require_relative "settings"

module Ruzzy
  # Where ruzzy's native files are, and loading the extension from there.
  #
  # A gem built from source (`gem install ruzzy`) compiles them for the Ruby
  # installing it into lib/ruzzy/. A precompiled gem (Platforms) carries
  # one set per Ruby version in lib/ruzzy/<major.minor>/ and loads the one
  # for RUBY_VERSION, as rake-compiler's "fat" gems do. This file loads no
  # native code itself, so the `ruzzy` command can use it before
  # re-executing itself under a sanitizer preload. It requires what the
  # extension reads when it loads: the exit statuses, the error tags, the
  # kinds of finding and the name of the coverage locations setting.
  module Native
    # The Ruby version the precompiled set must match ("3.4").
    RUBY_MINOR = RUBY_VERSION[/\A\d+\.\d+/]
    EXTENSION = "ruzzy_ext.#{RbConfig::CONFIG.fetch("DLEXT", "so")}".freeze
    # The oldest glibc the precompiled gem's shared objects load on (Debian
    # 11, Ubuntu 20.04, OSS-Fuzz's images); bin/abi-check holds every shipped
    # file to it.
    GLIBC_BASELINE = "2.31"
    FROM_SOURCE = "install the source gem instead, which builds on this machine with Rust " \
                  "(https://rustup.rs) and clang: gem install ruzzy --platform ruby"

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
      return load_from(found) if found

      versions = precompiled_versions
      raise LoadError, "ruzzy has no native extension for Ruby #{RUBY_VERSION}" +
                       (if versions.empty?
                          ": reinstall it so it is built for this Ruby (gem pristine ruzzy)"
                        else
                          " (this precompiled gem has #{versions.join(", ")}); #{FROM_SOURCE}"
                        end)
    end

    # Requires the extension in found_dir; the loader's own message (a
    # missing glibc version, a wrong architecture) with what to do instead.
    def load_from(found_dir)
      path = File.join(found_dir, EXTENSION)
      require(path)
    rescue LoadError => e
      hint = if File.basename(found_dir) == RUBY_MINOR
               "the precompiled gems need #{Platforms.cpus} Linux with glibc #{GLIBC_BASELINE} or newer " \
                 "(this is #{Platforms.local}); #{FROM_SOURCE}"
             else
               "reinstall ruzzy so it is built again for this system (gem pristine ruzzy)"
             end
      raise LoadError, "ruzzy's native extension cannot be loaded: #{e.message}\n#{hint}"
    end
  end
end

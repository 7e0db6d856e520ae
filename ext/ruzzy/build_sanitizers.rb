# frozen_string_literal: true

# Builds, at `gem install`, the sanitizer preloads and Ruzzy.dummy's
# extension into OUTPUT_DIR (Ruzzy::SanitizerBuild, lib/ruzzy/sanitizers/build.rb).
# Never fails: without clang or its runtimes the gem still installs for
# pure-Ruby fuzzing, and sanitizers.txt tells the user what to install.
#
#   ruby build_sanitizers.rb OUTPUT_DIR
#
# Environment: RUZZY_CLANG (default: clang).

require_relative "../../lib/ruzzy/sanitizers/build"

Ruzzy::SanitizerBuild.new(ARGV.fetch(0)).run

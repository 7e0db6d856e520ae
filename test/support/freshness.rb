# frozen_string_literal: true

# Whether something made from this checkout's files is older than they are:
# the in-tree build (test/test_helper.rb) and the gem packaged from it
# (test/support/installed_ruzzy.rb) ask the same question the same way.
# Files only: a directory's mtime moves whenever anything is created or
# removed in it (an editor's swap file, a build's temporary file), which
# says nothing about what was made.
module Freshness
  ROOT = File.expand_path("../..", __dir__)
  # What the in-tree build (bin/compile: lib/ruzzy/<major.minor>/) is made from.
  NATIVE_SOURCES = %w[ext/ruzzy/src/**/* ext/ruzzy/*.rs lib/ruzzy/sanitizers/*.c ext/dummy/*.c].freeze
  # What the gem packaged from the checkout ships (the in-tree build's files
  # among them).
  GEM_SOURCES = %w[lib/**/* exe/* ruzzy.gemspec].freeze

  module_function

  # The files (not directories) +patterns+ match, relative to ROOT, sorted.
  def files(patterns)
    Dir.glob(patterns, base: ROOT).select { |file| File.file?(File.join(ROOT, file)) }.sort
  end

  # The first file +patterns+ match that changed after +made+ (a Time), or
  # nil when none did.
  def changed_since(patterns, made)
    files(patterns).find { |file| File.mtime(File.join(ROOT, file)) > made }
  end
end

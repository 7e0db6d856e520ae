# frozen_string_literal: true

require "fileutils"
require "tmpdir"

# Libraries installed the way users install them, for the tests of what
# is "your code": gems built with `gem build` and installed into a gem home
# with `gem install --install-dir` (found through GEM_PATH). Included into
# a test class (it uses RuzzyTestHelper's run_command and assert_exit).
module InstalledGems
  # A small parser library installed as gems: tinyparse (what a harness
  # fuzzes) requires tinydep (what tinyparse uses).
  TINY_GEMS = {
    "tinydep" => { "lib/tinydep.rb" => <<~RUBY },
      module Tinydep
        def self.count(list) = list.size
      end
    RUBY
    "tinyparse" => { "lib/tinyparse.rb" => <<~RUBY, "lib/tinyparse/scanner.rb" => <<~SCANNER }
      require "tinydep"
      require_relative "tinyparse/scanner"

      module Tinyparse
        def self.parse(data)
          tokens = Scanner.new(data).tokens
          return [] if Tinydep.count(tokens).zero?

          tokens
        end
      end
    RUBY
      module Tinyparse
        class Scanner
          def initialize(data)
            @data = data
          end

          def tokens
            list = []
            @data.each_byte do |byte|
              kind = if byte.between?(48, 57) then :digit
                     elsif byte == 32 then :space
                     else :other
                     end
              list << kind
            end
            list
          end
        end
      end
    SCANNER
  }.freeze

  # Installs TINY_GEMS into the gem home +home+; returns name => the gem's
  # directory.
  def install_tiny_gems(home)
    TINY_GEMS.to_h { |name, files| [name, install_gem(home, name, files)] }
  end

  # Builds a gem NAME 0.1.0 from +files+ (path under the gem => source)
  # with `gem build` and installs it into the gem home +home+, as a user
  # installs a library (`gem install --install-dir`); returns the gem's
  # directory there.
  def install_gem(home, name, files)
    Dir.mktmpdir("ruzzy-gem") do |src|
      files.each do |path, source|
        FileUtils.mkdir_p(File.dirname(File.join(src, path)))
        File.write(File.join(src, path), source)
      end
      File.write(File.join(src, "#{name}.gemspec"), <<~RUBY)
        Gem::Specification.new do |spec|
          spec.name = #{name.inspect}
          spec.version = "0.1.0"
          spec.summary = "a library for ruzzy's tests"
          spec.authors = ["ruzzy"]
          spec.license = "Apache-2.0"
          spec.files = #{files.keys.inspect}
        end
      RUBY
      # This Ruby's RubyGems (the `gem` on PATH may be another Ruby's).
      [%W[-S gem build #{name}.gemspec],
       %W[-S gem install --local --no-document --install-dir #{home} #{name}-0.1.0.gem]]
        .each do |command|
        assert_exit 0, ruby(*command, chdir: src)
      end
    end
    File.join(home, "gems", "#{name}-0.1.0")
  end

  # The environment that finds the gems installed in +home+ as well as the
  # usual ones.
  def gem_path_env(home)
    { "GEM_PATH" => [home, *Gem.path].join(File::PATH_SEPARATOR) }
  end
end

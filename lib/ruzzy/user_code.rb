# frozen_string_literal: true

# May use: native, own_files.

require "rbconfig"
require_relative "native"
require_relative "own_files"

module Ruzzy
  # "Your code": what a campaign's status line counts as "yours" and what
  # `ruzzy cov` reports by default. It is decided by what the user fuzzes:
  #
  # 1. the files under the harness's directory (the harness among them),
  #    but not installed gems or Ruby's library that happen to lie there
  #    (a vendor/bundle);
  # 2. the files of each library the harness requires directly (a
  #    `require`, `require_relative` or autoload run by the harness or by
  #    another file of its directory), installed or not: the whole gem when
  #    the required file belongs to an activated one (its full_gem_path: a
  #    gem home, Debian's rubygems-integration, a Bundler path), the load
  #    path directory it was found in when it is not installed (a
  #    project's lib/ given with -I), or else the
  #    required file, the directory of the same name beside it, and the
  #    other files of the installed gemspec that lists it (Debian's
  #    vendor_ruby/net/ldap.rb, vendor_ruby/net/ldap/ and net-ldap's
  #    vendor_ruby/net/ber/; Ruby's csv.rb and csv/). What those libraries
  #    load in turn is not yours;
  # 3. what --include names.
  #
  # ruzzy's own files and Ruby's internal ones are never yours. The
  # process that loads the harness (a campaign's worker, each replay child
  # of `ruzzy cov`) calls watch before loading it, so every process decides
  # the same way. Decisions are cached per path: the status line asks for
  # every reached file every few seconds.
  module UserCode
    module_function

    # Starts watching the harness at +harness+ (a path) load: from now on,
    # the libraries it requires directly are yours (unless +libraries+ is
    # false: a web app's are its framework's), as are the paths the
    # +include+ patterns (--include) name.
    def watch(harness, include: [], libraries: true)
      @harness_dir = "#{File.dirname(File.expand_path(harness))}/"
      @include = include.dup.freeze
      @roots = []
      @cache = {}
      @requires ||= TracePoint.new(:script_compiled) { |point| required(point) }
      @requires.enable if libraries && !@requires.enabled?
      @requires.disable if !libraries && @requires.enabled?
    end

    # Whether +path+ (a source path as coverage reports it) is the user's
    # code.
    def include?(path)
      cache = (@cache ||= {})
      cache.fetch(path) { cache[path] = decide(path) }
    end

    # Where installed gems and Ruby's own library live.
    def installed_dirs
      @installed_dirs ||= begin
        config = RbConfig::CONFIG
        gems = Gem.path.map { |dir| "#{File.expand_path(dir)}/" }
        ruby = config.values_at("rubylibprefix", "sitedir", "vendordir").compact.reject(&:empty?)
        (gems + ruby.map { |dir| "#{dir}/" }).uniq.freeze
      end
    end

    def decide(path)
      return false if path.start_with?(OWN_FILES, "<internal:")
      return true if @roots&.any? { |root| root.end_with?("/") ? path.start_with?(root) : path == root }
      return true if harness_dir?(path)

      !@include.nil? && !@include.empty? && Ruzzy::Native._rules_include?(@include, [], path)
    end

    # Whether +path+ lies under the harness's directory (and not in an
    # installed gem or Ruby library below it).
    def harness_dir?(path)
      return false unless @harness_dir && path.start_with?(@harness_dir)

      installed_dirs.none? { |dir| dir.start_with?(@harness_dir) && path.start_with?(dir) }
    end

    # The script_compiled hook: a file that the harness or another file of
    # its directory required makes its library yours.
    def required(point)
      return if point.eval_script

      path = point.instruction_sequence&.absolute_path
      return if path.nil? || include?(path) || !harness_dir?(requirer.to_s)

      @roots += library_root(path)
      @cache = {}
    rescue StandardError
      nil # deciding what is yours must never break a require
    end

    # The path of the code that ran the require being compiled: the first
    # frame outside this file and the require machinery.
    def requirer
      machinery = require_machinery
      caller_locations.each do |frame|
        path = frame.absolute_path || frame.path
        next if path.nil? || path == __FILE__ || path.start_with?("<internal:")
        next if machinery.any? { |file| path == file || (file.end_with?("/") && path.start_with?(file)) }

        return path
      end
      nil
    end

    # The code that implements require: the files defining Kernel#require,
    # #require_relative and #load (and the methods they override), and
    # RubyGems' and Bundler's own files.
    def require_machinery
      files = %i[require require_relative load].flat_map do |name|
        method = Kernel.instance_method(name)
        sources = []
        while method
          sources << method.source_location&.first
          method = method.super_method
        end
        sources
      end
      tools = [[Gem, :path], ([Bundler, :setup] if defined?(Bundler))].compact
      dirs = tools.filter_map { |mod, name| mod.method(name).source_location&.first&.delete_suffix(".rb")&.+("/") }
      (files.compact + dirs).uniq
    end

    # What a directly required +path+ makes yours: its gem's directory
    # when it belongs to an activated gem; the load path directory it was
    # found in when it is not installed (a project's lib/ given with -I:
    # the files it loads from there are the project's too); or else the
    # file, the directory of the same name beside it, and, for an
    # installed file, the other files of the installed gem specification
    # that lists it (a Debian package in vendor_ruby, a default gem in
    # Ruby's library).
    def library_root(path)
      spec = Gem.loaded_specs.each_value.find { |gem| path.start_with?("#{gem.full_gem_path}/") }
      return ["#{spec.full_gem_path}/"] if spec

      installed = installed_dirs.any? { |dir| path.start_with?(dir) }
      project = !installed && load_path_entry(path)
      return [project] if project

      [path, "#{path.sub(%r{\.[^./]+\z}, "")}/", *(installed ? listed_with(path) : [])].uniq
    end

    # The Ruby files of the installed gem specification that lists +path+
    # (found through the load path), where +path+ was found.
    def listed_with(path)
      base = load_path_entry(path)
      return [] unless base

      feature = path.delete_prefix(base)
      Gem::Specification.each do |spec|
        prefix = spec.require_paths.map { |dir| "#{dir}/" }.find { |dir| spec.files.include?("#{dir}#{feature}") }
        next unless prefix

        ruby = spec.files.select { |file| file.start_with?(prefix) && file.end_with?(".rb") }
        return ruby.map { |file| "#{base}#{file.delete_prefix(prefix)}" }
      end
      []
    end

    # The load path's directory +path+ lies in (the longest), with "/".
    def load_path_entry(path)
      $LOAD_PATH.map { |dir| "#{File.expand_path(dir)}/" }.select { |dir| path.start_with?(dir) }.max_by(&:size)
    end

    private_class_method :decide, :harness_dir?, :required, :requirer, :require_machinery, :library_root,
                         :listed_with, :load_path_entry
  end
end

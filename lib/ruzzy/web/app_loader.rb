# frozen_string_literal: true

require_relative "../error"
require_relative "routes"
require_relative "names"

module Ruzzy
  module Web
    # Loads the app `ruzzy rack APP` names, in the test environment unless
    # the environment says another (RACK_ENV, APP_ENV, RAILS_ENV):
    #
    # - a Rails application's root directory (it has config/environment.rb):
    #   that file is required and the app is Rails.application;
    # - a directory with a config.ru, or a .ru file: Rack::Builder's;
    # - a Ruby file: required; the app is what it defines: the
    #   Rails application, a Sinatra app with routes (classic or one
    #   Sinatra::Base subclass, or the one subclass of others with routes),
    #   or the Rack app in its constant APP.
    #
    # Invariant: the app is loaded once, in the process that fuzzes it, after
    # coverage is on (the ruzzy command loads this from its harness).
    module AppLoader
      # What an app whose file cannot be loaded raises.
      module LoadError
        include Error
        extend Error::Tag
        RAISED_AS = RuntimeError
      end

      ENVIRONMENT = %w[RACK_ENV APP_ENV RAILS_ENV].freeze

      module_function

      # The Rack app at +path+.
      def load(path)
        path = File.expand_path(path)
        raise LoadError, "no such app: #{path} (give a config.ru, a Rails root or a Ruby file)" unless File.exist?(path)

        environment = ENVIRONMENT.filter_map { |name| ENV.fetch(name, nil) }.first || "test"
        ENVIRONMENT.each { |name| ENV[name] ||= environment }
        app = if File.directory?(path) then directory(path)
              elsif path.end_with?(".ru") then rackup(path)
              else
                ruby_file(path)
              end
        unless app.respond_to?(:call)
          raise LoadError, "#{path} gives #{app.inspect}, which is not a Rack app (no #call)"
        end

        app
      end

      # What to do about +error+, raised while an app loaded, or nil: an app
      # with no database for the environment it was loaded in.
      def load_error_hint(error)
        return nil unless error.message.to_s.match?(/database is not configured|configuration does not specify adapter/)

        "the app was loaded with RAILS_ENV=#{ENV.fetch("RAILS_ENV", "test")}, for which it configures no database " \
          "(config/database.yml): set RAILS_ENV to an environment it configures, e.g. " \
          "RAILS_ENV=production ruzzy rack APP (each request's changes to the database are rolled back)"
      end

      # Ruzzy.fuzz_rack on the app at +path+, with the OpenAPI description
      # its directory holds, if any, and the names its code mentions (what
      # `ruzzy rack` and `ruzzy cov rack` run).
      def fuzz(path, session:)
        app = load(path)
        dir = File.dirname(root_file(path))
        Ruzzy.fuzz_rack(app, session:, openapi: Routes.openapi_file(dir), names: Names.discover([dir]))
      end

      # Where `ruzzy rack` traces coverage unless --include says where:
      # the app's own files (its directory, without the folders that hold
      # no code it runs on a request, Names::SKIPPED), so that the inputs
      # kept are those that reach new code of the app, not those that vary
      # the framework's work (which otherwise fills the corpus: a Rails
      # app's members listing is new Active Record and rendering coverage
      # for every new query). Coverage.start's +include+ and +exclude+.
      def coverage_patterns(path)
        dir = File.dirname(root_file(path))
        { include: ["#{dir}/"], exclude: Names::SKIPPED.map { |folder| "#{dir}/#{folder}/" } }
      end

      # The file whose directory is the app's own code ("yours").
      def root_file(path)
        path = File.expand_path(path)
        File.directory?(path) ? File.join(path, "config.ru") : path
      end

      def directory(dir)
        environment = File.join(dir, "config", "environment.rb")
        if File.file?(environment)
          require environment
          return ::Rails.application if defined?(::Rails) && ::Rails.application
        end
        config = File.join(dir, "config.ru")
        return rackup(config) if File.file?(config)

        raise LoadError, "#{dir} has neither config/environment.rb (Rails) nor config.ru"
      end

      def rackup(file)
        require "rack"
        require "rack/builder"
        app = Dir.chdir(File.dirname(file)) { ::Rack::Builder.parse_file(file) }
        app.is_a?(Array) ? app.first : app # Rack 2 returns [app, options]
      end

      def ruby_file(file)
        require file
        defined_app or raise LoadError, "#{file} defines no Rack app: define APP, a Sinatra app, or give a config.ru"
      end

      # The app a required file defined.
      def defined_app
        return ::Rails.application if defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application
        return Object.const_get(:APP) if Object.const_defined?(:APP) && Object.const_get(:APP).respond_to?(:call)

        sinatra_app
      end

      # The one Sinatra app with routes that no other one subclasses (a
      # subclass serves its parents' routes too), classic apps last; nil
      # when there is none or more than one.
      def sinatra_app
        return unless defined?(::Sinatra::Base)

        apps = ObjectSpace.each_object(Class).select { |klass| klass < ::Sinatra::Base && klass.routes.any? }
        apps.delete(::Sinatra::Application) if apps.size > 1 && defined?(::Sinatra::Application)
        apps = apps.reject { |app| apps.any? { |other| other < app } }
        apps.first if apps.size == 1
      end
    end
  end
end

# frozen_string_literal: true

# This file and every file of lib/ruzzy/web/ stand on one floor (docs/architecture.md):
# May use: detectors, error, gen, guidance.

require_relative "error"
require_relative "web/request"
require_relative "web/routes"
require_relative "web/names"
require_relative "web/request_gen"
require_relative "web/session"
require_relative "web/links"
require_relative "web/rack_target"
require_relative "web/app_loader"

module Ruzzy
  # Web applications (docs/web-apps.md): a Rack app (Rails, Sinatra, any
  # other) fuzzed in process, one request per input (Ruzzy.fuzz_rack, the
  # `ruzzy rack APP` command). The parts, lowest first: Request (one
  # request, as a Rack environment, a curl command, a test), Routes (the
  # app's, read from its framework), RequestGen (Gen.request: inputs into
  # requests), RackTarget (a request sent; which responses are findings;
  # the database rolled back), AppLoader (the app `ruzzy rack` names).
  module Web
    module_function

    # Sinatra's settings of a test suite: exceptions raised to the caller,
    # not rendered or printed.
    SINATRA_TEST_SETTINGS = { raise_errors: true, show_exceptions: false, dump_errors: false }.freeze

    # Makes the app answer as in its test suite where it would refuse
    # requests a test makes or hide its exceptions: Rails' forgery
    # protection is turned off, Sinatra apps raise their exceptions.
    # Returns what was changed, for the INFO line, and what cannot be
    # changed any more: a Sinatra app loaded in the development
    # environment has its error pages (the 404 page fails on a path that
    # is not UTF-8), set up when Sinatra was loaded.
    def test_mode!
      changes = sinatra_test_mode!(sinatra_apps)
      if defined?(::ActionController::Base) && ::ActionController::Base.allow_forgery_protection
        ::ActionController::Base.allow_forgery_protection = false
        changes << "Rails' forgery protection turned off"
      end
      changes
    end

    # The Sinatra apps loaded (subclasses of Sinatra::Base).
    def sinatra_apps
      return [] unless defined?(::Sinatra::Base)

      ObjectSpace.each_object(Class).select { |klass| klass < ::Sinatra::Base }
    end

    # test_mode! for the Sinatra +apps+: what changed, and a word on apps
    # loaded in the development environment.
    def sinatra_test_mode!(apps)
      changed = apps.select do |app|
        SINATRA_TEST_SETTINGS.any? { |name, value| app.settings.public_send(name) != value }
      end
      changed.each { |app| SINATRA_TEST_SETTINGS.each { |name, value| app.set(name, value) } }
      changes = changed.empty? ? [] : ["Sinatra apps raise their exceptions (raise_errors)"]
      return changes unless apps.any? { |app| app.settings.environment.to_s == "development" }

      changes << "a Sinatra app runs in the development environment, whose own error pages can fail: " \
                 "set ENV[\"RACK_ENV\"] = \"test\" before requiring it"
    end

    # The Server of +app+: `bin/rails server` for the Rails application,
    # `ruby app.rb` for a classic Sinatra app, rackup for any other (a
    # config.ru; for a named class, such as a modular Sinatra app, one that
    # runs it, which its file may not have).
    def server(app)
      return Server.new("bin/rails server", 3000) if rails_application?(app)
      return Server.new("ruby app.rb", 4567) if defined?(::Sinatra::Application) && app.equal?(::Sinatra::Application)

      named = app.is_a?(Module) && app.name
      named ? Server.new("rackup with a config.ru of `run #{app.name}`", Server::RACKUP.port) : Server::RACKUP
    end

    def rails_application?(app)
      rails = defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application
      rails ? app.equal?(rails) : false
    end

    # Ruby that gives +app+, for a finding's test: Rails.application, a
    # named app class, or a placeholder to replace.
    def app_expression(app)
      return "Rails.application" if rails_application?(app)
      return app.name if app.is_a?(Module) && app.name

      "YOUR_APP # the Rack app (Rack::Builder.parse_file(\"config.ru\"))"
    end

    # What Ruzzy.fuzz_rack says before fuzzing: the routes and the rest.
    def info(routes, changes, session = 1)
      routes = routes.map { |route| route.body_keys.to_a.empty? ? route : "#{route} {#{route.body_keys.join(", ")}}" }
      listed = routes.first(8).map(&:to_s).join(", ")
      more = routes.size > 8 ? " and #{routes.size - 8} more" : ""
      route_text = routes.empty? ? "no routes known (any path)" : "#{routes.size} routes: #{listed}#{more}"
      sessions = session > 1 ? "; sessions of up to #{session} requests" : ""
      database = if defined?(::ActiveRecord::Base)
                   "; each #{session > 1 ? "session" : "request"} in a database transaction rolled back"
                 else
                   ""
                 end
      "INFO: ruzzy rack: #{route_text}#{sessions}#{database}#{changes.map { |change| "; #{change}" }.join}"
    end
  end
end

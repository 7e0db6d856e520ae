# frozen_string_literal: true

require "json"
require_relative "../error"
require_relative "names"

module Ruzzy
  module Web
    # A route of the app: the methods it answers (+verbs+, empty for any),
    # its path +template+ ("/projects/:id/notes", optional parts left out)
    # and its +params+ (the names in the template, in order), with the
    # +constraints+ the app declares for them (name => Regexp).
    # +body_keys+: the property names of its JSON body, when an OpenAPI
    # description says them; +names+: those the code that answers it
    # mentions (Names.of_code), most likely its params' and cookies' names.
    Route = Struct.new(:verbs, :template, :params, :constraints, :body_keys, :names, keyword_init: true) do
      # The path with +values+ (Strings, escaped here) in place of the
      # params; a missing value is "1".
      def fill(values)
        index = -1
        template.gsub(Routes::PARAM) do
          index += 1
          Web.escape(values[index] || "1")
        end
      end

      def to_s = "#{verbs.empty? ? "ANY" : verbs.join("|")} #{template}"
    end

    # The routes of a Rack app, read from the frameworks that declare them:
    # Rails' route set and every Sinatra::Base subclass with routes. Routes
    # given by the user ("POST /notes/:id") are parsed the same way.
    #
    # Invariant: a route's template has only literal segments and params
    # (:name, *glob); a route that is a regular expression is left out (the
    # free path of Gen.request still reaches it).
    module Routes
      # A param in a template: :name or *glob.
      PARAM = /[:*][A-Za-z_][A-Za-z0-9_]*/
      # A route's optional parts: (.:format) in Rails, "?" in Sinatra.
      OPTIONAL = /\([^()]*\)/
      # Rails' own routes, not the app's.
      FRAMEWORK_PATHS = %r{\A/(rails|cable|(recede|resume|refresh)_historical_location)(/|\z)}
      # Methods a route of any method is fuzzed with.
      ANY_VERBS = %w[GET POST].freeze

      module_function

      # The routes of the frameworks loaded in this process (Rails', then
      # Sinatra's), without duplicates.
      def discover
        (rails + sinatra).uniq { |route| [route.verbs, route.template] }
      end

      # Where an app keeps its OpenAPI description, from its root.
      OPENAPI_FILES = %w[openapi swagger].product(%w[json yaml yml]).map { |name, ext| "#{name}.#{ext}" }
      OPENAPI_DIRS = ["", "public", "doc", "docs", "config", "spec", "swagger", "openapi"].freeze
      # The methods an OpenAPI path item may describe.
      OPENAPI_VERBS = %w[get put post delete options head patch].freeze

      # The OpenAPI (or Swagger 2) description in the app's directory +root+,
      # or nil.
      def openapi_file(root)
        paths = OPENAPI_DIRS.product(OPENAPI_FILES).map { |dir, file| File.join(root, dir, file) }
        paths.find { |path| File.file?(path) }
      end

      # The routes an OpenAPI description (the file +path+, JSON or YAML)
      # gives: each operation, {param} as :param, with the property names
      # of its JSON body (OpenAPI 3's requestBody, Swagger 2's body
      # parameter) as the route's body_keys.
      def openapi(path)
        document = read_document(path)
        base = document["basePath"].to_s.chomp("/")
        (document["paths"] || {}).flat_map do |template, item|
          next [] unless item.is_a?(Hash)

          item.slice(*OPENAPI_VERBS).map do |verb, operation|
            route([verb.upcase], base + template.gsub(/\{([A-Za-z_][A-Za-z0-9_]*)\}/, ':\\1')).tap do |made|
              made.body_keys = body_keys(operation, document)
            end
          end
        end
      rescue StandardError => e
        raise InvalidArgumentsError, "#{path}: not an OpenAPI description ruzzy can read (#{e.class}: #{e.message})"
      end

      def read_document(path)
        text = File.read(path)
        return JSON.parse(text) if path.end_with?(".json")

        require "yaml"
        YAML.safe_load(text, aliases: true)
      end

      # The property names of +operation+'s JSON body (references into
      # #/components/schemas and #/definitions followed once).
      def body_keys(operation, document)
        return [] unless operation.is_a?(Hash)

        body = Array(operation["parameters"]).find { |param| param.is_a?(Hash) && param["in"] == "body" }
        schema = operation.dig("requestBody", "content", "application/json", "schema") || body&.fetch("schema", nil)
        schema = resolve(schema, document)
        schema.is_a?(Hash) && schema["properties"].is_a?(Hash) ? schema["properties"].keys.map(&:to_s) : []
      end

      def resolve(schema, document)
        ref = schema.is_a?(Hash) && schema["$ref"]
        return schema unless ref.is_a?(String) && ref.start_with?("#/")

        document.dig(*ref.delete_prefix("#/").split("/"))
      end

      # Routes from +specs+: Strings "VERB /path/:param" (VERB may be
      # "GET|POST" or ANY) or Route objects.
      def parse(specs)
        unless specs.is_a?(Array) && specs.all? { |spec| spec.is_a?(String) || spec.is_a?(Route) }
          raise InvalidArgumentsError, "routes: takes an Array of \"VERB /path/:param\" Strings, got #{specs.inspect}"
        end

        specs.map do |spec|
          next spec if spec.is_a?(Route)

          verb, path = spec.split(" ", 2)
          unless path&.start_with?("/")
            raise InvalidArgumentsError, "a route is \"VERB /path\" (\"POST /notes/:id\"), got #{spec.inspect}"
          end

          route(verb == "ANY" ? [] : verb.upcase.split("|"), path)
        end
      end

      # A Route from its +verbs+ and a +path+ template with optional parts.
      def route(verbs, path, constraints = {})
        template = path.gsub(OPTIONAL, "").delete("?")
        template = "/" if template.empty?
        params = template.scan(PARAM).map { |param| param[1..] }
        Route.new(verbs:, template:, params:, constraints: constraints.slice(*params.map(&:to_sym)), body_keys: [],
                  names: [])
      end

      # Rails' routes (Rails.application's), without Rails' own.
      def rails
        return [] unless defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application

        ::Rails.application.routes.routes.filter_map do |journey|
          path = journey.path.spec.to_s
          next if path.match?(FRAMEWORK_PATHS) || (journey.respond_to?(:internal) && journey.internal)

          verbs = journey.verb.to_s.split("|").reject(&:empty?)
          constraints = journey.requirements.select { |_, value| value.is_a?(Regexp) }
          route(verbs, path, constraints).tap { |made| made.names = action_names(journey.defaults) }
        end
      rescue StandardError
        [] # an app whose routes cannot be read is fuzzed through the free path
      end

      # The names of the controller action a Rails route's +defaults+ name
      # (its method's, then its controller file's), or [].
      def action_names(defaults)
        controller, action = defaults.values_at(:controller, :action)
        return [] unless defined?(::ActiveSupport::Inflector) && controller.is_a?(String) && action.is_a?(String)

        inflector = ::ActiveSupport::Inflector
        klass = inflector.safe_constantize(inflector.camelize("#{controller}_controller"))
        return [] unless klass.is_a?(Module) && klass.method_defined?(action)

        Names.of_code(klass.instance_method(action), file: true)
      rescue StandardError, ::LoadError
        []
      end

      # The routes of every Sinatra::Base subclass (HEAD routes Sinatra adds
      # beside GET left out).
      def sinatra
        return [] unless defined?(::Sinatra::Base)

        ObjectSpace.each_object(Class).select { |klass| klass < ::Sinatra::Base }.flat_map do |app|
          app.routes.flat_map do |verb, routes|
            next [] if verb == "HEAD"

            routes.filter_map do |pattern, _conditions, wrapper|
              path = pattern.to_s
              next unless path.start_with?("/") && !pattern.is_a?(Regexp) && sinatra_template?(pattern)

              route([verb], path).tap { |made| made.names = block_names(wrapper) }
            end
          end
        end
      end

      # The names of a Sinatra route's block, which its +wrapper+ (the Proc
      # Sinatra keeps) holds as its local `block`, or [].
      def block_names(wrapper)
        binding = wrapper.binding
        block = binding.local_variable_get(:block) if binding.local_variable_defined?(:block)
        block.is_a?(Proc) ? Names.of_code(block) : []
      rescue StandardError
        []
      end

      # Whether a Sinatra (Mustermann) pattern is a template, not a Regexp.
      def sinatra_template?(pattern)
        !(defined?(::Mustermann::Regular) && pattern.is_a?(::Mustermann::Regular))
      end
    end
  end
end

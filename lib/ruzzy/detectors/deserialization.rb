# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Unsafe deserialization: Marshal.load (restore), YAML/Psych
    # unsafe_load (and load where the Ruby's Psych allows classes), JSON
    # with additions (JSON.load, unsafe_load, parse(create_additions:
    # true)), Oj.load when loaded, instantiating CANARY_CLASS, a class
    # named by the input.
    # The canary class (defined at the top level while fuzzing) reports
    # from each way a deserializer builds an object (allocation seen by
    # Marshal's proc, init_with, marshal_load, _load, json_create,
    # initialize). YAML.safe_load never instantiates it.
    class Deserialization < Report
      NAME = :deserialization
      SUMMARY = "Marshal.load, YAML.unsafe_load, JSON additions and Oj.load building a class chosen by the input"

      # The canary in YAML and JSON (JSON's additions, Oj's object mode).
      TEXT_WORDS = ["!ruby/object:#{CANARY_CLASS}", "--- !ruby/object:#{CANARY_CLASS} {}\n",
                    %({"json_class":"#{CANARY_CLASS}"}), %({"^o":"#{CANARY_CLASS}"}), CANARY_CLASS].freeze

      class << self
        def install
          canary = canary_class
          marshal_hooks = Module.new do
            define_method(:load) do |source, proc = nil, **options|
              Deserialization.guide(source, Marshal)
              watch = lambda do |object|
                Deserialization.instantiated("Marshal.load") if canary === object # rubocop:disable Style/CaseEquality -- works for BasicObject too
                proc ? proc.call(object) : object
              end
              super(source, watch, **options)
            end
            alias_method :restore, :load
          end
          Marshal.singleton_class.prepend(marshal_hooks)
          guide_loads(Psych, "Psych.", %i[load unsafe_load load_stream unsafe_load_file]) if defined?(Psych)
          guide_loads(Oj, "Oj.", %i[load object_load]) if defined?(Oj)
          guide_json if defined?(JSON)
        end

        # Marshal's bytes for an instance of the canary class.
        def marshal_canary
          @marshal_canary ||= Marshal.dump(canary_class.allocate)
        end

        # Steers a serialized +source+ towards the canary: Marshal data is
        # compared with the canary's own dump, text with its YAML and JSON
        # forms.
        def guide(source, format)
          return unless source.is_a?(String)
          return Ruzzy::Native._guide_equal(source, marshal_canary) if format == Marshal

          Detectors.guide(source, TEXT_WORDS)
        end

        # The input made +sink+ instantiate the canary class.
        def instantiated(sink)
          Detectors.report(new("unsafe deserialization: #{sink} instantiated #{CANARY_CLASS}, a class of the " \
                               "input's choosing", sink))
        end

        # The canary class, defined at the top level on first use (and
        # kept: looking it up again would go through the hooked const_get).
        def canary_class
          @canary_class ||= Object.const_defined?(CANARY_CLASS, false) ? Object.const_get(CANARY_CLASS) : define_canary
        end

        def define_canary
          Object.const_set(CANARY_CLASS, Class.new do
            def self._load(*) = Deserialization.instantiated("Marshal.load (_load)")
            def self.json_create(*) = Deserialization.instantiated("JSON/Oj (json_create)")
            def initialize(*) = Deserialization.instantiated("#{CANARY_CLASS}.new") # rubocop:disable Lint/MissingSuper
            def init_with(*) = Deserialization.instantiated("Psych (init_with)")
            def marshal_load(*) = Deserialization.instantiated("Marshal.load (marshal_load)")
          end)
        end

        private

        # JSON.load and unsafe_load, and JSON.parse with create_additions,
        # build the class named by "json_class" (its json_create).
        def guide_json
          guide_loads(JSON, "JSON.", %i[load unsafe_load])
          additions = lambda do |_sink, args|
            guide(args.first, JSON) if args.last.is_a?(Hash) && args.last[:create_additions]
          end
          Detectors.hook(JSON.singleton_class, "JSON.", %i[parse parse!], additions)
        end

        def guide_loads(target, label, methods)
          Detectors.hook(target.singleton_class, label, methods, ->(_sink, args) { guide(args.first, target) })
        end
      end
    end
  end
end

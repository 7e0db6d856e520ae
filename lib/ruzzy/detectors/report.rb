# frozen_string_literal: true

require_relative "../own_files"
require_relative "../native"

module Ruzzy
  # What every detector (detectors/*.rb) reports with: the canaries its
  # input must reach, Report, the class of its findings, and the functions
  # it hooks its sinks, guides inputs and reports with. The rest of
  # Ruzzy::Detectors (the list of detectors, choosing and installing them)
  # is in detectors.rb.
  module Detectors
    # The detectors' own files (the frames between a sink and its caller).
    HOOK_FILES = ["#{File.dirname(__dir__)}/detectors.rb", "#{__dir__}/"].freeze

    # The canary command, path component and method name.
    CANARY = "ruzzy"

    # The canary as a word of query code (any case, as SQL reads it).
    BARE_CANARY = /\b#{CANARY}\b/i

    # The canary written into query code (SQL, XPath) where a value was
    # expected: out of a string literal of either quote, or after a value.
    QUERY_WORDS = ["' or #{CANARY} or '", "\" or #{CANARY} or \"", " or #{CANARY}", CANARY].freeze

    # The canary class and constant name.
    CANARY_CLASS = "RuzzyCanary"

    # A bug a detector found. It is recorded, then raised at the dangerous
    # call, which therefore never runs; recorded first, so a rescue in the
    # code under test cannot hide it. An Exception, not a StandardError, so
    # that a plain `rescue` does not catch it either. `ignore:` (or
    # --ignore) with a detector's class silences that detector's findings.
    class Report < Exception # rubocop:disable Lint/InheritException -- must get past `rescue => e`
      # The call the detector stopped ("Kernel#system").
      attr_reader :sink

      def initialize(message = nil, sink = nil)
        super(message)
        @sink = sink
      end

      # The detector's name (:command_injection).
      def detector
        self.class::NAME
      end
    end

    module_function

    # Prepends to +target+ a module whose methods +methods+ (those +target+
    # has) first call check.call(sink, args), sink being +label+ and the
    # method name and args the positional arguments (then the keywords as
    # a Hash, when given), then the original. Visibility is kept.
    def hook(target, label, methods, check)
      hooks = Module.new
      methods.each do |name|
        private_method = target.private_method_defined?(name)
        next unless private_method || target.method_defined?(name)

        sink = "#{label}#{name}"
        hooks.define_method(name) do |*args, **options, &block|
          check.call(sink, options.empty? ? args : [*args, options])
          super(*args, **options, &block)
        end
        hooks.send(:private, name) if private_method
      end
      target.prepend(hooks)
    end

    # Records +finding+ and raises it, unless ruzzy itself made the call.
    def report(finding)
      return if own_call?

      Ruzzy::Native._detector_report(finding)
      raise finding
    end

    # Whether the dangerous call was made by ruzzy's own code.
    def own_call?
      caller_locations.each do |location|
        path = location.absolute_path || location.path.to_s
        next if HOOK_FILES.any? { |prefix| path.start_with?(prefix) }

        return path.start_with?(OWN_FILES)
      end
      false
    end

    # Reports the canary forms +words+ to libFuzzer as searched for in
    # +value+ (a String; anything else is ignored).
    def guide(value, words)
      Ruzzy::Native._guide_towards(value, words)
    end

    # Checks the query +text+ (SQL, XPath, an LDAP filter) before +sink+
    # runs it, for +detector+ (a Report class with WORDS, LANGUAGE, TEXT,
    # INJECTED and injected?(text)): guides the text towards the canary
    # forms, and reports the finding when the input wrote query code (the
    # block, when given, says so in place of injected?).
    def check_query(detector, sink, text)
      return unless text.is_a?(String)

      guide(text, detector::WORDS)
      return unless block_given? ? yield(text) : detector.injected?(text)

      report(detector.new("#{detector::LANGUAGE} injection: #{sink} got the #{detector::TEXT} #{shown(text)}, " \
                          "where the input #{detector::INJECTED}", sink))
    end

    # +text+ inspected for a report, cut after 200 characters.
    def shown(text)
      text.is_a?(String) && text.length > 200 ? "#{text[0, 200].inspect}..." : text.inspect
    end

    # The class or module at +path+ ("SQLite3::Statement") if it is loaded,
    # else nil (never loading it).
    def loaded_constant(path)
      path.split("::").reduce(Object) do |scope, name|
        return nil unless scope.const_defined?(name, false)

        scope.const_get(name, false)
      end
    end

    # Whether +text+ (query code: SQL, XPath) has CANARY as a bare word
    # once every part +quoted+ matches (its literals, quoted names and
    # comments) is blanked out: the input wrote code, not data.
    def bare_canary?(text, quoted)
      text.match?(BARE_CANARY) && text.gsub(quoted, " ").match?(BARE_CANARY)
    end

    # +value+ as a path String (Pathname and other #to_path objects), or nil.
    def path_string(value)
      value = value.to_path if !value.is_a?(String) && value.respond_to?(:to_path)
      value.is_a?(String) ? value : nil
    end

    private_class_method :own_call?
  end
end

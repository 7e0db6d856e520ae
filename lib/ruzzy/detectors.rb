# frozen_string_literal: true

# This file and every file of lib/ruzzy/detectors/ stand on one floor (docs/architecture.md):
# May use: error, feedback, name_list, native, own_files, settings.

require_relative "error"
require_relative "settings"
require_relative "name_list"
require_relative "own_files"
require_relative "native"
require_relative "detectors/report"

module Ruzzy
  # Bug detectors: hooks on dangerous calls (shell commands, file paths,
  # deserialization, code evaluation and reflection, regular expressions,
  # network connections, SQL, XPath, LDAP filters, XML entities) that turn
  # into findings the bugs that raise nothing: input that reaches a shell
  # command, a path that walks out of its directory, a class of the input's
  # choosing instantiated, a method of its choosing called, a match that
  # backtracks for seconds, a pattern the input broke, a connection to a
  # host it chose, a query it rewrote, an external entity it declared. See
  # docs/detectors.md.
  #
  # Each detector fires only when the input steers the call to a harmless
  # canary: a command named CANARY, a path "../" + CANARY or "/" + CANARY, a
  # class named CANARY_CLASS, a method named CANARY. The hooks report the
  # canary forms to libFuzzer as comparisons (and a NameError's missing name
  # is compared with CANARY), so inputs grow towards them. They are not
  # dictionary words: a dictionary slows the search everywhere else.
  #
  # Ruzzy.fuzz installs all of them unless told otherwise (detectors: false,
  # detectors: %i[command_injection redos], the ruzzy command's
  # --disable-detectors=NAME,..., RUZZY_DISABLE_DETECTORS=NAME,...).
  module Detectors
    # The canaries (CANARY, CANARY_CLASS, ...) and Report, the class of
    # every detector's findings, are in detectors/report.rb.

    # The detectors' own files (the frames between a sink and its caller).
    HOOK_FILES = [__FILE__, "#{__dir__}/detectors/"].freeze

    module_function

    # Every detector, in the order they are listed and installed.
    def all
      [CommandInjection, PathTraversal, Deserialization, CodeInjection, ReDoS, RegexpInjection, SSRF, SQLInjection,
       XPathInjection, LDAPInjection, XXE]
    end

    # The canary forms each detector steers inputs towards (its WORDS), one
    # list per detector that has any: what a generator of a web request
    # offers as a value beside free text.
    def payloads
      all.map do |detector|
        %i[WORDS TEXT_WORDS CODE_WORDS].flat_map do |name|
          detector.const_defined?(name, false) ? detector.const_get(name) : []
        end.uniq
      end.reject(&:empty?)
    end

    # Every detector's name.
    def names
      all.map { |detector| detector::NAME }
    end

    # The detectors named by +value+: true (all), false or nil (none), or a
    # list of names (Symbols or Strings).
    def select(value, option = "detectors")
      chosen = NameList.parse(value, names, option:, kind: "detector")
      all.select { |detector| chosen.include?(detector::NAME) }
    end

    # The default for Ruzzy.fuzz's detectors: keyword: the session's (the
    # ruzzy command's --disable-detectors, else environment_setting).
    def default_setting
      Ruzzy.session.detectors
    end

    # All detectors but those named in RUZZY_DISABLE_DETECTORS ("all" for
    # none).
    def environment_setting
      without(ENV.fetch(Settings::DISABLE_DETECTORS, "").split(","),
              "--disable-detectors (or #{Settings::DISABLE_DETECTORS})")
    end

    # The detectors: setting that turns off those in +disabled+ (names;
    # "all" for every one); +option+ names the setting in errors.
    def without(disabled, option)
      disabled = disabled.map(&:strip).reject(&:empty?)
      return true if disabled.empty?
      return false if disabled == ["all"]

      names - select(disabled, option).map { |detector| detector::NAME }
    end

    # Allows the network connections the target makes on purpose while
    # fuzzing, which the ssrf detector would report: to +host+ (a name as
    # the code passes it, an IP address, or an IPAddr range; nil: any) on
    # +port+ (an Integer or a service name; nil: any). Call it in the
    # harness before Ruzzy.fuzz. Connections made before fuzzing starts are
    # never reported.
    def allow_network(host: nil, port: nil)
      SSRF.allow(host, port)
      nil
    end

    # Installs +detectors+ (each once).
    def install(detectors)
      @installed ||= []
      (detectors - @installed).each do |detector|
        detector.install
        @installed << detector
      end
    end

    # One line per detector, for `ruzzy --list-detectors`.
    def listing
      width = names.map(&:length).max
      all.map { |detector| "  #{detector::NAME.to_s.ljust(width)}  #{detector::SUMMARY}\n" }.join
    end

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

require_relative "detectors/shell_command"
require_relative "detectors/command_injection"
require_relative "detectors/path_traversal"
require_relative "detectors/deserialization"
require_relative "detectors/code_injection"
require_relative "detectors/redos"
require_relative "detectors/regexp_injection"
require_relative "detectors/ssrf"
require_relative "detectors/sql_injection"
require_relative "detectors/xpath_injection"
require_relative "detectors/ldap_injection"
require_relative "detectors/xxe"

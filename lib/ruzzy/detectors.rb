# frozen_string_literal: true

# This file and every file of lib/ruzzy/detectors/ stand on one floor (docs/architecture.md):
# May use: error, feedback, name_list, native, own_files, settings.

require_relative "error"
require_relative "settings"
require_relative "name_list"
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
    # The canaries (CANARY, CANARY_CLASS, ...), Report, the class of every
    # detector's findings, and the functions every detector hooks, guides
    # and reports with are in detectors/report.rb.

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

    # Installs +detectors+ (each once); +replaying+: the inputs are given
    # files, run once each (the redos detector then allows for how late it
    # can see a match start).
    def install(detectors, replaying: false)
      ReDoS.replaying = replaying
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

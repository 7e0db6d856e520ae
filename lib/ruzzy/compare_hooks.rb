# frozen_string_literal: true

require_relative "name_list"

module Ruzzy
  # Comparison feedback: while fuzzing, comparisons, pattern matches and
  # conversions report their operands to libFuzzer, which then inserts the
  # values they were compared with into new inputs (magic numbers,
  # keywords, header strings, Hash keys, tokens a regular expression
  # expects, numbers written in text).
  #
  # The hook modules (native code) are only prepended when fuzzing starts:
  # a program that merely requires ruzzy keeps Ruby's fast paths. Ruzzy.fuzz
  # installs them unless told not to (compare_hooks: false, the ruzzy
  # command's --no-compare-hooks, or RUZZY_COMPARE_HOOKS=0); a list of
  # GROUPS (compare_hooks: %i[integer string], RUZZY_COMPARE_HOOKS=
  # integer,string) installs only those.
  #
  # Hooked, by group:
  # integer:: Integer ==, !=, <, <=, >, >=, <=>, eql?, ===, between?, and
  #           the divisor of /, %, div, divmod, modulo (with an Integer or
  #           a Float)
  # string:: String ==, !=, eql?, ===, <=>, start_with?, end_with?,
  #          include?, index
  # symbol:: Symbol ==, !=, ===
  # hash:: Hash [], fetch, key?, has_key?, include?, member?, dig with
  #        String, Symbol or Integer keys
  # float:: Float ==, !=, <, <=, >, >=, <=>, eql?, ===
  # regexp:: Regexp match, match?, =~, ===; String match, match?, =~, [],
  #          slice, scan, sub, gsub, sub!, gsub!, split;
  #          StringScanner scan, check, match?, skip, scan_until,
  #          check_until, skip_until, exist? (when strscan is loaded)
  # conversion:: Integer(), Float(), String#to_i, String#to_f
  #
  # case/when on these types goes through === and is hooked too. Results
  # never change: each hook returns what the original method returns, and
  # sets $~ where it would.
  module CompareHooks
    # [group, class (or its name, for classes that may not be loaded),
    # hook module], in the order they are prepended.
    HOOKS = [
      [:integer, Integer, IntegerHooks],
      [:string, String, StringHooks],
      [:symbol, Symbol, SymbolHooks],
      [:hash, Hash, HashHooks],
      [:float, Float, FloatHooks],
      [:regexp, Regexp, RegexpHooks],
      [:regexp, String, StringPatternHooks],
      [:regexp, "StringScanner", ScannerHooks],
      [:conversion, Kernel, KernelConversionHooks],
      [:conversion, String, StringConversionHooks]
    ].freeze

    # Every group of hooks.
    GROUPS = HOOKS.map(&:first).uniq.freeze

    # Classes whose hooks have a fast path that assumes Ruby's own
    # definition (see DefinitionWatcher).
    WATCHED = [Integer, String, Symbol, Hash].freeze

    module_function

    # Reports method changes on the hooked classes, so that a hook whose
    # fast path assumes Ruby's own definition stops assuming it.
    module DefinitionWatcher
      def method_added(name)
        Ruzzy::CompareHooks._method_changed(self, name)
        super
      end

      def method_removed(name)
        Ruzzy::CompareHooks._method_changed(self, name)
        super
      end

      def method_undefined(name)
        Ruzzy::CompareHooks._method_changed(self, name)
        super
      end
    end

    # Prepends the hook modules of +groups+ (all by default; each once).
    # Returns true.
    def install(groups = GROUPS)
      groups = groups(groups)
      return true if installed?(groups)

      _snapshot_builtins
      WATCHED.each { |klass| klass.singleton_class.prepend(DefinitionWatcher) }
      hooks(groups).each { |klass, hooks| klass.prepend(hooks) unless klass.ancestors.include?(hooks) }
      true
    end

    # Whether the hooks of +groups+ (all by default) are in place.
    def installed?(groups = GROUPS)
      hooks(groups(groups)).all? { |klass, hooks| klass.ancestors.include?(hooks) }
    end

    # [class, hook module] for the +groups+ whose class is loaded.
    def hooks(groups)
      HOOKS.filter_map do |group, klass, hooks|
        klass = Object.const_get(klass) if klass.is_a?(String) && Object.const_defined?(klass)
        [klass, hooks] if groups.include?(group) && klass.is_a?(Module)
      end
    end

    # The groups named by +value+: true (all), false (none), or a list of
    # names (Symbols or Strings).
    def groups(value)
      NameList.parse(value, GROUPS, option: "compare_hooks (or RUZZY_COMPARE_HOOKS)", kind: "group")
    end

    # The default for Ruzzy.fuzz's compare_hooks: keyword, from
    # RUZZY_COMPARE_HOOKS: "0" none (false), "1" (or unset) all (true),
    # else a comma-separated list of groups (an Array).
    def default_setting
      setting = ENV.fetch("RUZZY_COMPARE_HOOKS", "1")
      case setting
      when "0" then false
      when "1", "" then true
      else setting.split(",")
      end
    end
  end
end

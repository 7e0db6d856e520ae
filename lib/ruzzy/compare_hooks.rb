# frozen_string_literal: true

module Ruzzy
  # Comparison feedback: while fuzzing, Integer, String, Symbol and Hash
  # comparisons and lookups report their operands to libFuzzer, which then
  # inserts the values they were compared with into new inputs (magic
  # numbers, keywords, header strings, Hash keys).
  #
  # The hook modules (native code) are only prepended when fuzzing starts:
  # a program that merely requires ruzzy keeps Ruby's fast paths. Ruzzy.fuzz
  # installs them unless told not to (compare_hooks: false, the ruzzy
  # command's --no-compare-hooks, or RUZZY_COMPARE_HOOKS=0).
  #
  # Hooked: Integer ==, !=, <, <=, >, >=, <=>, eql?, ===, between?, and the
  # divisor of /, %, div, divmod, modulo; String ==, !=, eql?, ===, <=>,
  # start_with?, end_with?, include?, index; Symbol ==, !=, ===; Hash [],
  # fetch, key?, has_key?, include?, member?, dig with String, Symbol or
  # Integer keys. case/when on these types goes through === and is hooked
  # too. Results never change: each hook returns what the original method
  # returns.
  module CompareHooks
    HOOKS = {
      Integer => IntegerHooks,
      String => StringHooks,
      Symbol => SymbolHooks,
      Hash => HashHooks
    }.freeze

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

    # Prepends the hook modules (once). Returns true.
    def install
      return true if installed?

      _snapshot_builtins
      HOOKS.each_key { |klass| klass.singleton_class.prepend(DefinitionWatcher) }
      HOOKS.each { |klass, hooks| klass.prepend(hooks) unless klass.ancestors.include?(hooks) }
      true
    end

    # Whether the hooks are in place.
    def installed?
      HOOKS.all? { |klass, hooks| klass.ancestors.include?(hooks) }
    end

    # The default for Ruzzy.fuzz's compare_hooks: keyword.
    def enabled_by_default?
      ENV.fetch("RUZZY_COMPARE_HOOKS", "1") != "0"
    end
  end
end

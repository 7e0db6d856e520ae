# frozen_string_literal: true

require_relative "../name_list"
require_relative "../native"
require_relative "../settings"

# CompareHooks::TABLE and the hook modules are the extension's.
Ruzzy::Native.require_extension

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
  # The hooked methods, by group, are listed by CompareHooks.hooked_methods
  # (from the native table, CompareHooks::TABLE); the groups are GROUPS.
  # case/when on these types goes through === and is hooked too. Results
  # never change: each hook returns what the original method returns, and
  # sets $~ where it would.
  module CompareHooks
    # [group, class (or its name, for a class not loaded yet), hook module],
    # in the order they are prepended, from the native table (TABLE: one
    # [group, class name, hook module, method name, fast path?] per hook).
    HOOKS = TABLE.map do |group, name, hooks, _method, _fast|
      [group, Object.const_defined?(name) ? Object.const_get(name) : name, hooks]
    end.uniq.freeze

    # Every group of hooks.
    GROUPS = HOOKS.map(&:first).uniq.freeze

    # Classes whose hooks have a fast path that assumes Ruby's own
    # definition (see DefinitionWatcher).
    WATCHED = TABLE.select(&:last).map { |_, name, *| Object.const_get(name) }.uniq.freeze

    # The hooked methods YJIT cannot compile once they are redefined: where
    # one runs on what YJIT specializes it for (two Fixnums, a Hash, a
    # `case` over Integers), its code leaves for the interpreter, which then
    # runs the rest of the method (Ruby 3.1's yjit_codegen.c, 3.3's and
    # 3.4's yjit/src/codegen.rs: gen_fixnum_cmp, gen_opt_mod, gen_opt_aref,
    # gen_opt_case_dispatch). Under YJIT they are not hooked.
    YJIT_UNCOMPILED = { "Integer" => %i[< <= > >= % ===], "Hash" => %i[[]] }.freeze

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

      _prepare
      leave_to_yjit(groups) if yjit?
      WATCHED.each { |klass| klass.singleton_class.prepend(DefinitionWatcher) }
      hooks(groups).each { |klass, hooks| klass.prepend(hooks) unless klass.ancestors.include?(hooks) }
      true
    end

    # The hooked methods of each group: { integer: ["Integer#==", ...], ... }.
    def hooked_methods
      TABLE.each_with_object(Hash.new { |hash, group| hash[group] = [] }) do |(group, klass, _, method, _), list|
        list[group] << "#{klass}##{method}"
      end
    end

    # Whether the hooks of +groups+ (all by default) are in place.
    def installed?(groups = GROUPS)
      hooks(groups(groups)).all? { |klass, hooks| klass.ancestors.include?(hooks) }
    end

    # Whether YJIT compiles this process's Ruby code.
    def yjit?
      !!(defined?(RubyVM::YJIT) && RubyVM::YJIT.respond_to?(:enabled?) && RubyVM::YJIT.enabled?)
    end

    # Takes the YJIT_UNCOMPILED methods out of the hook modules of +groups+
    # before they are prepended, and says so in an INFO line.
    def leave_to_yjit(groups)
      left = HOOKS.flat_map do |group, klass, hooks|
        name = klass.is_a?(Module) ? klass.name : klass
        methods = groups.include?(group) ? YJIT_UNCOMPILED.fetch(name, []) & hooks.instance_methods(false) : []
        methods.each { |method| hooks.send(:remove_method, method) }
        methods.map { |method| "#{name}##{method}" }
      end
      return if left.empty?

      warn "INFO: ruzzy: YJIT is on: #{left.join(", ")} report no comparisons (YJIT cannot compile " \
           "them once redefined); without YJIT they do"
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

    # The setting RUZZY_COMPARE_HOOKS gives: "0" none (false), "1" (or
    # unset) all (true), else a comma-separated list of groups (an Array).
    def environment_setting
      setting = ENV.fetch(Settings::COMPARE_HOOKS, "1")
      case setting
      when "0" then false
      when "1", "" then true
      else setting.split(",")
      end
    end

    private_class_method :hooks, :leave_to_yjit
  end
end

# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Code and reflection injection: input that makes the program call the
    # method CANARY (defined on Kernel while fuzzing) through eval,
    # instance_eval, class_eval, module_eval, Binding#eval, ERB#result,
    # send, public_send, __send__ or method(...).call, or look up the
    # constant CANARY_CLASS with const_get (as constantize-style helpers
    # do). Code the input only appears in as data (a String literal in
    # eval'd code) never calls it.
    class CodeInjection < Report
      NAME = :code_injection
      SUMMARY = "eval, instance_eval, ERB, send/public_send and const_get running code or names chosen by the input"

      # Methods through which deserializers look up the class a document
      # names (json's additions): such a lookup is the deserialization
      # detector's to report, when the class is built.
      DESERIALIZER_LOOKUPS = %w[deep_const_get].freeze

      # The canary in code: a call on its own, after a statement, breaking
      # out of a String literal or interpolated into one.
      CODE_WORDS = [CANARY, ";#{CANARY};", "'+#{CANARY}+'", "\"+#{CANARY}+\"", "\#{#{CANARY}}"].freeze

      class << self
        def install
          define_canary
          Ruzzy::Native._guide_missing_names(CANARY)
          Ruzzy::Native._guide_code(CODE_WORDS)
          eval_hooks.each { |target, hooks| target.prepend(hooks) }
          constant_hooks = Module.new do
            def const_get(name, *rest)
              CodeInjection.check_constant(name)
              super
            end
          end
          Module.prepend(constant_hooks)
        end

        # [target, native hook module]: eval and friends report the code
        # they get against CODE_WORDS (ext/ruzzy/src/detectors/guidance.rs;
        # named here, not in a constant, as the `ruzzy` command loads this
        # file before the native extension).
        def eval_hooks
          [[Kernel, KernelEvalHooks], [BasicObject, ObjectEvalHooks], [Module, ModuleEvalHooks],
           [Binding, BindingEvalHooks]]
        end

        # The canary method: calling it is the finding.
        def define_canary
          return if Kernel.method_defined?(CANARY) || Kernel.private_method_defined?(CANARY)

          Kernel.define_method(CANARY) do |*_args, **_options|
            CodeInjection.called(caller_locations(1, 1).first)
          end
        end

        # The canary method was called from +location+.
        def called(location)
          path = location&.path.to_s
          through = path.start_with?("(eval") ? "code given to eval" : location&.label.to_s
          Detectors.report(new("code injection: the input made the program call #{CANARY}, a method of its " \
                               "choosing (through #{through})", through))
        end

        # const_get(+name+): a lookup of the canary constant is the finding.
        def check_constant(name)
          name = name.to_s if name.is_a?(Symbol)
          return unless name.is_a?(String)

          Ruzzy::Native._guide_equal(name, CANARY_CLASS)
          return unless name.split("::").last == CANARY_CLASS
          return if caller_locations.any? { |location| DESERIALIZER_LOOKUPS.include?(location.base_label) }

          Detectors.report(new("code injection: Module#const_get looked up #{name}, a constant of the input's " \
                               "choosing", "Module#const_get"))
        end
      end
    end
  end
end

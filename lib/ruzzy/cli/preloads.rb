# frozen_string_literal: true

require_relative "../engine/relaunch"
require_relative "../engine/choice"
require_relative "../sanitizers"

module Ruzzy
  class CLI
    # Re-executing the command with a library in LD_PRELOAD: a sanitizer
    # preload (--sanitizer=NAME) or LibAFL's runtime (--engine=libafl).
    # Each returns only when its library is preloaded already.
    module Preloads
      private

      # --engine=NAME: the engine of this process's Ruzzy.fuzz. LibAFL's
      # runtime does not run under the sanitizer preloads (they carry
      # libFuzzer): with --sanitizer=NAME the sanitizer's own runtime is
      # preloaded behind it instead, and the sanitizer is done with.
      def preload_engine
        ENV[Engine::Choice::ENV_NAME] = @engine
        return unless @engine == "libafl"

        relaunch_with(Engine::Choice.libafl_path!, Engine::Choice.libafl_environment(@sanitizer))
        @sanitizer = nil
      end

      def preload_sanitizer
        preload = Sanitizers.path!(@sanitizer)
        relaunch_with(preload, Sanitizers.preload_environment(preload))
      end

      def relaunch_with(file, environment)
        return if Sanitizers.preloaded?(file)

        Relaunch.exec_ruby(environment, [File.expand_path(@program), *@original_argv])
      end
    end
  end
end

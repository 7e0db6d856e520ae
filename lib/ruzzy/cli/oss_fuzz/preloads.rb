# frozen_string_literal: true

require "fileutils"
require "open3"
require "tmpdir"
require_relative "../../sanitizers/build"
require_relative "../../sanitizers"
require_relative "../../settings"

module Ruzzy
  class OssFuzz
    # The sanitizer preloads of the ruzzy copy in $OUT, rebuilt with the
    # build's own clang (OSS-Fuzz's and ClusterFuzzLite's $CC), so the
    # runtime preloaded at run time is the one that instrumented the
    # project's C extensions. When that clang cannot build them, the gem's
    # own preloads stay, and the line returned says why.
    module Preloads
      module_function

      # The clang to build with: RUZZY_CLANG, else $CC when it is a clang,
      # else clang on PATH.
      def clang(env)
        explicit = env.fetch(Settings::CLANG, "")
        return explicit unless explicit.empty?

        cc = env.fetch("CC", "").split.first
        cc && File.basename(cc).start_with?("clang") ? cc : "clang"
      end

      # Rebuilds the preloads into native_dir; one line saying what happened.
      def rebuild(native_dir, env)
        compiler = clang(env)
        Dir.mktmpdir("ruzzy-preloads") do |work|
          build = SanitizerBuild.new(work, clang: compiler, dummy: false, quiet: true).run
          unless build.preloads_built?
            problems = build.status.grep(Sanitizers::PROBLEM)
            return "kept the gem's own sanitizer preloads (#{compiler} could not build them: #{problems.join("; ")})"
          end

          Sanitizers::FILES.each_value { |file| FileUtils.cp(File.join(work, file), File.join(native_dir, file)) }
        end
        "sanitizer preloads built with #{compiler} (#{version(compiler)})"
      end

      def version(compiler)
        output, = Open3.capture2e(compiler, "--version")
        output.lines.first.to_s.strip
      end
    end
  end
end

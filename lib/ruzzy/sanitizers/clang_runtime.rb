# frozen_string_literal: true

require "open3"

module Ruzzy
  # Finding one of clang's compiler-rt runtimes. Clang keeps them in one of
  # two layouts: lib/linux/libclang_rt.NAME-ARCH.a (Debian's, Ubuntu's)
  # or a directory per target triple, lib/ARCH-unknown-linux-gnu/
  # libclang_rt.NAME.a (LLVM's own builds, OSS-Fuzz's clang). Clang finds
  # files of the layout it was built for; the resource directory is
  # searched for the other. ARCH is that of the clang's target (x86_64,
  # aarch64; a cross-compiling clang's --target).
  module ClangRuntime
    module_function

    # The path of the runtime NAME of +clang+ (ext "a": the static archive,
    # "so": the shared runtime), or nil.
    def find(clang, name, ext: "a")
      arch = target_arch(clang)
      return nil unless arch

      flat = "libclang_rt.#{name}-#{arch}.#{ext}"
      per_target = "libclang_rt.#{name}.#{ext}"
      [flat, per_target].each do |file|
        path = output(clang, "-print-file-name=#{file}")
        return path if path && File.file?(path)
      end
      resource = output(clang, "-print-resource-dir")
      return nil unless resource

      [File.join(resource, "lib", "linux", flat), *Dir.glob(File.join(resource, "lib", "#{arch}*-linux*", per_target))]
        .find { |path| File.file?(path) }
    end

    # The architecture clang compiles for ("x86_64", "aarch64"), or nil
    # when it does not run.
    def target_arch(clang)
      output(clang, "-dumpmachine")&.split("-")&.first
    end

    def output(clang, *args)
      text, status = Open3.capture2(clang, *args, err: File::NULL)
      status.success? ? text.strip : nil
    rescue SystemCallError
      nil
    end
  end
end

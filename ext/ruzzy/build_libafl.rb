# frozen_string_literal: true

# Builds, at `gem install` when asked for, LibAFL's libFuzzer-compatible
# runtime as a shared object for `ruzzy --engine=libafl` into OUTPUT_DIR:
# ext/libafl writes the runtime's static archive (libafl_libfuzzer, its
# symbols renamed), linked here whole into libafl_libfuzzer.so. Never fails
# the install: libafl.txt says what happened and what to do.
#
#   ruby build_libafl.rb OUTPUT_DIR
#
# Environment:
#   RUZZY_LIBAFL=1             build it (needs Rust 1.93.1+ and rustup's llvm-tools
#                              component; about 4 minutes on two cores)
#   RUZZY_LIBAFL_RUNTIME=FILE  install this already built libafl_libfuzzer.so instead
#                              (refused when built for another machine)
#   CARGO, CC                  the cargo and the C compiler (default: cargo, cc)
#   RUZZY_LIBAFL_TARGET_DIR    keep cargo's build products there (faster rebuilds)

require "fileutils"
require "open3"
require "tmpdir"
require_relative "../../lib/ruzzy/engine/choice"
require_relative "../../lib/ruzzy/extensions/shared_object"

output = File.expand_path(ARGV.fetch(0))
FileUtils.mkdir_p(output)
runtime = File.join(output, Ruzzy::Engine::Choice::LIBAFL_FILE)
status = File.join(output, Ruzzy::Engine::Choice::LIBAFL_STATUS_FILE)
prebuilt = ENV.fetch("RUZZY_LIBAFL_RUNTIME", "")
crate = File.expand_path("../libafl", __dir__)

# Runs +command+; nil when it succeeded, else its last lines.
def failure(command, env: {})
  output, result = Open3.capture2e(env, *command)
  result.success? ? nil : "#{command.first} failed: #{output.lines.last(5).join.strip}"
rescue SystemCallError => e
  "#{command.first} failed: #{e.message}"
end

def build(crate, runtime)
  cargo = ENV.fetch("CARGO", "cargo")
  cc = ENV.fetch("CC", "cc")
  keep = ENV.fetch("RUZZY_LIBAFL_TARGET_DIR", "")
  Dir.mktmpdir("ruzzy-libafl") do |work|
    target = keep.empty? ? File.join(work, "target") : File.expand_path(keep)
    archive = File.join(work, "libafl_libfuzzer.a")
    failure([cargo, "build", "--release", "--locked", "--manifest-path", File.join(crate, "Cargo.toml")],
            env: { "CARGO_TARGET_DIR" => target }) ||
      failure([File.join(target, "release", "ruzzy-libafl-runtime"), archive]) ||
      failure([cc, "-shared", "-o", runtime, "-Wl,--whole-archive", archive, "-Wl,--no-whole-archive",
               "-lstdc++", "-lpthread", "-ldl", "-lrt", "-lm", "-Wl,-s"])
  end
end

# Installs the runtime +prebuilt+ names; nil when done, else what is wrong.
def install(prebuilt, runtime)
  return "no such file: #{prebuilt}" unless File.file?(prebuilt)

  other = Ruzzy::Extensions::SharedObject.other_machine(prebuilt)
  return "#{prebuilt} was #{other}" if other

  FileUtils.cp(prebuilt, runtime)
  nil
end

problem = if !prebuilt.empty?
            install(prebuilt, runtime)
          elsif ENV.fetch("RUZZY_LIBAFL", "") == "1"
            build(crate, runtime)
          end
if problem
  FileUtils.rm_f(runtime)
  File.write(status, "the build failed (#{problem}); #{Ruzzy::Engine::Choice.libafl_report_default}\n")
  warn "ruzzy: LibAFL's runtime was not built: #{problem}"
elsif File.file?(runtime)
  File.write(status, "built\n")
else
  FileUtils.rm_f(status)
end

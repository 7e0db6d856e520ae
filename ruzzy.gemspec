# frozen_string_literal: true

require_relative "lib/ruzzy/version"
require_relative "lib/ruzzy/platforms"

# A precompiled gem (bin/platform-gem, bin/arm64) sets RUZZY_PLATFORM, one of
# Ruzzy::Platforms::PRECOMPILED: extensions built for each supported Ruby in
# lib/ruzzy/<major.minor>/, nothing to compile, no Rust sources.
precompiled = ENV.fetch("RUZZY_PLATFORM", nil)
if precompiled && !Ruzzy::Platforms::PRECOMPILED.include?(precompiled)
  raise ArgumentError, "RUZZY_PLATFORM=#{precompiled}: not one of #{Ruzzy::Platforms::PRECOMPILED.join(", ")}"
end

Gem::Specification.new do |spec|
  spec.name = "ruzzy"
  spec.version = Ruzzy::VERSION
  spec.summary = "A coverage-guided fuzzer for Ruby code and Ruby C extensions"
  spec.description = <<~DESC
    ruzzy runs libFuzzer over Ruby code: it finds inputs that raise unexpected
    exceptions in pure Ruby, and memory errors in C extensions built with
    AddressSanitizer. Its native core is written in Rust.
  DESC
  spec.license = "Apache-2.0"
  spec.authors = ["The ruzzy developers"]
  spec.homepage = "https://github.com/ruzzy-rs/ruzzy"
  spec.platform = Gem::Platform.new(precompiled) if precompiled
  spec.required_ruby_version = precompiled ? [">= 3.1", "< 3.5"] : ">= 3.1"

  source_files = Dir[
    "lib/**/*.{rb,c}", "exe/*", "ext/ruzzy/extconf.rb", "ext/ruzzy/build_sanitizers.rb", "ext/ruzzy/build.rs",
    "ext/ruzzy/build_libafl.rb", "ext/libafl/Cargo.toml", "ext/libafl/Cargo.lock", "ext/libafl/src/*.rs",
    "ext/dummy/dummy.c",
    "ext/ruzzy/Cargo.toml", "ext/ruzzy/src/**/*.{rs,c}", "Cargo.toml", "Cargo.lock", ".cargo/config.toml",
    "README.md", "CHANGELOG.md", "LICENSE", "docs/**/*.{md,png}", "examples/**/*"
  ].reject { |path| path.include?("/build/") || File.directory?(path) }
  spec.files = if precompiled
                 source_files.reject { |path| path.start_with?("ext/", "Cargo", ".cargo") } +
                   Dir["lib/ruzzy/[0-9]*.[0-9]*/*.{so,txt}", "lib/ruzzy/libafl_libfuzzer.so"]
               else
                 source_files
               end
  spec.bindir = "exe"
  spec.executables = ["ruzzy"]
  spec.require_paths = ["lib"]
  spec.extensions = precompiled ? [] : ["ext/ruzzy/extconf.rb"]
  spec.metadata["rubygems_mfa_required"] = "true"
end

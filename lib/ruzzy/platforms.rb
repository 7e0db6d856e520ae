# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # The platforms ruzzy is published for as a precompiled gem, named once:
  # bin/platform-gem builds the x86_64 one, bin/arm64 the aarch64 one, the
  # gemspec accepts no other, and every message that sends a user to a
  # precompiled gem reads this. Loads nothing (extconf.rb uses it too).
  module Platforms
    # RubyGems' names of the precompiled gems' platforms.
    PRECOMPILED = %w[x86_64-linux aarch64-linux].freeze
    # Those whose precompiled gem carries LibAFL's runtime (ruzzy
    # --engine=libafl): it is not cross-built for aarch64 (bin/arm64).
    WITH_LIBAFL = %w[x86_64-linux].freeze

    module_function

    # This machine's platform as RubyGems names it ("x86_64-linux").
    def local
      Gem::Platform.local.to_s
    end

    # The precompiled gem's platform that runs here, or nil: RubyGems' own
    # match (Debian's Rubies are "aarch64-linux-gnu" to RubyGems 3.5 and
    # newer, and "linux" matches them, not "linux-musl").
    def precompiled
      PRECOMPILED.find { |name| Gem::Platform.new(name) === Gem::Platform.local } # rubocop:disable Style/CaseEquality
    end

    # The CPUs of the precompiled gems, for a message ("x86_64 or aarch64").
    def cpus
      PRECOMPILED.map { |name| Gem::Platform.new(name).cpu }.join(" or ")
    end

    # What to run for the precompiled gem on this machine, or that there is
    # none (for a message after a failed source build).
    def precompiled_hint
      name = precompiled
      return "Or install the precompiled gem, which needs no compiler: gem install ruzzy --platform #{name}" if name

      "There is no precompiled gem for #{local} (only #{PRECOMPILED.join(", ")})."
    end
  end
end

# frozen_string_literal: true

require_relative "../test_helper"

# End to end, as a user fuzzes a library installed the way users install
# them: Debian's packages (bin/setup installs them; bin/rubies unpacks the
# same versions into the chroots), a harness in a directory of its own, ruzzy
# run from a new shell that has only what a user's shell has, and every
# command ruzzy prints run as printed, from another new shell.
class TestInstalledLibraries < Minitest::Test
  # Debian 12's ruby-toml-rb: a gem under rubygems-integration.
  TOML_RB = "/usr/share/rubygems-integration/all/specifications/toml-rb-2.2.0.gemspec"
  # Debian 12's ruby-toml: plain files in vendor_ruby.
  TOML = "/usr/lib/ruby/vendor_ruby/toml.rb"
  # The source of Debian's ruby-sqlite3 (sid: sqlite3 2.9, whose gemspec
  # depends on mini_portile2, installed by Debian's ruby-mini-portile2), as
  # bin/rubies leaves it in the build chroot; seen from the host too.
  SQLITE3_SOURCES = ["/var/cache/sqlite3-source.tar",
                     File.join(ENV.fetch("RUZZY_CHROOTS", "/var/cache/ruzzy/chroots"), "build", "var", "cache",
                               "sqlite3-source.tar")].freeze

  # toml-rb 2.2 raises Encoding::CompatibilityError on a binary String that
  # is not ASCII (emancu/toml-rb#150).
  def test_a_gem_installed_by_apt
    prerequisite!(File.file?(TOML_RB), "Debian's ruby-toml-rb 2.2.0 (bin/setup installs it)")
    in_tmpdir do |dir|
      # A document to start from: toml-rb's own lines past the grammar are
      # reached at once, not only when the search happens on valid TOML.
      seed = "title = \"x\"\n[owner]\nname = 1\n"
      campaign = parser_campaign(dir, "fuzz_toml_rb.rb", "toml-rb", "TomlRB.parse",
                                 "TomlRB::ParseError, TomlRB::ValueOverwriteError", seconds: 40, seed:)
      assert_exit 77, campaign
      group = assert_group(campaign, dir, /Encoding::CompatibilityError: incompatible encoding regexp match/)
      yours = campaign.output.scan(/yours ([\d,]+) lines/).flatten.map { |n| n.delete(",").to_i }
      assert_operator yours.max.to_i, :>, 20, "the status line counts toml-rb's lines as yours:\n#{campaign.output}"
      act_on_the_finding(dir, group, /Encoding::CompatibilityError/)

      cov = user_shell("ruzzy cov fuzz_toml_rb.rb ruzzy-findings/corpus", chdir: dir)
      assert_exit 0, cov
      assert_match(/campaign: coverage \d+ -> \d+ in \d+ s/, cov.output, "the plot without --campaign")
      lcov = File.read(File.join(dir, "coverage-report", "lcov.info"))
      assert_match(%r{^SF:\S*/toml-rb-2\.2\.0/lib/toml-rb/parser\.rb$}, lcov, "toml-rb's files are reported")
    end
  end

  # toml 0.2 raises NoMethodError for every document it cannot parse (its
  # error handler calls #ascii_tree on nil), and for some it can (#each on
  # a Parslet::Slice).
  def test_a_library_in_vendor_ruby
    prerequisite!(File.file?(TOML), "Debian's ruby-toml 0.2.0 (bin/setup installs it)")
    in_tmpdir do |dir|
      campaign = parser_campaign(dir, "fuzz_toml.rb", "toml", "TOML.load", "Parslet::ParseFailed", seconds: 20)
      assert_exit 77, campaign
      # Which of toml's two NoMethodErrors comes first depends on the Ruby.
      group = assert_group(campaign, dir, /NoMethodError: undefined method [`'](?:ascii_tree|each)' for /, one: false)
      act_on_the_finding(dir, group, /NoMethodError/)

      cov = user_shell("ruzzy cov fuzz_toml.rb #{File.join("ruzzy-findings", group, "input")}", chdir: dir)
      assert_exit 0, cov
      lcov = File.read(File.join(dir, "coverage-report", "lcov.info"))
      assert_match(%r{^SF:/usr/lib/ruby/vendor_ruby/toml/parser\.rb$}, lcov, "toml's files are reported")
    end
  end

  # sqlite3's C extension built by build-ext into a gem home from its
  # source tree, its dependency found where apt installed it, fuzzed with
  # AddressSanitizer and GEM_PATH; the harness splices the input into SQL,
  # which the SQL injection detector reports through the C extension.
  def test_a_c_extension_built_into_a_gem_home
    source = SQLITE3_SOURCES.find { |path| File.file?(path) }
    prerequisite!(source, "Debian's ruby-sqlite3 source (bin/rubies setup downloads it)")
    prerequisite!(sanitizers_built?, "the sanitizer preloads")
    in_tmpdir do |dir|
      next unless build_sqlite3(dir, source)

      File.write(File.join(dir, "fuzz_sqlite.rb"), <<~'RUBY')
        require "ruzzy"
        require "sqlite3"

        DB = SQLite3::Database.new(":memory:")
        DB.execute("CREATE TABLE users (name TEXT)")

        Ruzzy.fuzz(lambda do |data|
          DB.execute("SELECT * FROM users WHERE name = '#{data}'")
          nil
        end)
      RUBY
      gems = { "GEM_PATH" => "#{File.join(dir, "fuzz-gems")}:" }
      campaign = user_shell("ruzzy --sanitizer=address --keep-going fuzz_sqlite.rb -seed=1 -max_total_time=20",
                            chdir: dir, env: gems)
      assert_exit 77, campaign
      group = assert_group(campaign, dir, /SQL injection/)
      act_on_the_finding(dir, group, /ERROR: ruzzy: bug detector sql_injection fired/)

      cov = user_shell("ruzzy cov fuzz_sqlite.rb ruzzy-findings/corpus", chdir: dir, env: gems)
      assert_exit 0, cov
      assert_match(/campaign: coverage \d+ -> \d+ in \d+ s/, cov.output, "the plot without --campaign")
      lcov = File.read(File.join(dir, "coverage-report", "lcov.info"))
      assert_match(%r{^SF:\S*/fuzz-gems/gems/sqlite3-2\.\d+\.\d+/lib/sqlite3/database\.rb$}, lcov)
    end
  end

  private

  # A campaign of +seconds+ on the harness +file+, which requires +library+
  # and calls +parse+ on each input, rescuing +expected+; its corpus starts
  # with +seed+, if given.
  def parser_campaign(dir, file, library, parse, expected, seconds:, seed: nil)
    File.write(File.join(dir, file), <<~RUBY)
      require "ruzzy"
      require "#{library}"

      Ruzzy.fuzz(lambda do |data|
        #{parse}(data)
        nil
      rescue #{expected}
        nil
      end)
    RUBY
    if seed
      FileUtils.mkdir_p(File.join(dir, "ruzzy-findings", "corpus"))
      File.write(File.join(dir, "ruzzy-findings", "corpus", "seed"), seed)
    end
    user_shell("ruzzy --keep-going #{file} -seed=1 -max_total_time=#{seconds}", chdir: dir)
  end

  # build-ext of the sqlite3 source tree +source+ into DIR/fuzz-gems, as its
  # INSTALLATION.md says for system libraries; whether it was built (sqlite3
  # 2.9 needs Ruby 3.2: on Ruby 3.1 build-ext must say so).
  def build_sqlite3(dir, source)
    FileUtils.mkdir_p(File.join(dir, "sqlite3"))
    assert_exit 0, run_command("tar", "xf", source, "-C", "sqlite3", "--strip-components=1", chdir: dir)
    build = user_shell("ruzzy build-ext sqlite3 --install-dir fuzz-gems -- --enable-system-libraries", chdir: dir)
    if Gem::Version.new(RUBY_VERSION) < Gem::Version.new("3.2")
      assert_exit 1, build
      assert_match(/sqlite3-2\.\d+\.\d+ requires Ruby version >= 3\.2/, build.output)
      return false
    end
    assert_exit 0, build
    assert_match(/checked 1 shared object\(s\): clang, address sanitizer, SanitizerCoverage/, build.output)
    true
  end

  # Runs +command+ in a new bash with only a user's environment: PATH, HOME
  # and LANG, the gem home ruzzy was installed into (GEM_HOME, GEM_PATH: the
  # chroots' Rubies have one), RUBYLIB when the tests run this checkout
  # (test_helper.rb), and +env+.
  def user_shell(command, chdir:, env: {}, rubylib: true)
    base = { "PATH" => ENV.fetch("PATH"), "HOME" => Dir.home, "LANG" => "C.UTF-8" }
    base.merge!(ENV.slice("GEM_HOME", "GEM_PATH"))
    base["RUBYLIB"] = ENV["RUBYLIB"] if rubylib && ENV["RUBYLIB"]
    variables = base.merge(env).map { |name, value| "#{name}=#{value}" }
    run_command("env", "-i", *variables, "bash", "--noprofile", "--norc", "-c", command, chdir:)
  end

  # A command ruzzy printed, run as printed from a new shell in another
  # directory, with nothing of the campaign's environment (the user's own
  # gem home stays: it is where ruzzy is installed).
  def run_as_printed(command)
    user_shell(command, chdir: "/", rubylib: false)
  end

  # The name of the group whose title matches +title+, filed once (+one+),
  # or the first of those.
  def assert_group(campaign, dir, title, one: true)
    list = user_shell("ruzzy findings", chdir: dir)
    assert_exit 0, list
    matching = list.stdout.lines.grep(title)
    message = "a group #{title.inspect}:\n#{list.stdout}\n#{campaign.output[-3000..]}"
    one ? assert_equal(1, matching.size, message) : refute_empty(matching, message)
    matching.first[/\b[a-z]+-\h{10}\b/]
  end

  # `ruzzy findings show`, its Reproduce: line run as printed, `replay` and
  # `minimise` of +group+, whose report matches +report+.
  def act_on_the_finding(dir, group, report)
    show = user_shell("ruzzy findings show #{group}", chdir: dir)
    assert_exit 0, show
    assert_match(report, show.stdout)
    reproduce = show.stdout[/^Reproduce: (.+)$/, 1]
    refute_nil reproduce, show.stdout
    again = run_as_printed(reproduce)
    assert_exit 77, again
    assert_match(report, again.stderr)

    replay = run_as_printed("cd #{dir} && ruzzy findings replay")
    assert_exit 77, replay
    assert_match(/^FAILS\s+#{group}\s+reproduced$/, replay.stdout)

    minimise = show.stdout[/^Minimise: +(.+)$/, 1]
    refute_nil minimise, show.stdout
    shrunk = run_as_printed(minimise)
    assert_exit 0, shrunk
    assert_match(/^#{group}: /, shrunk.stdout)
  end
end

# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/installed_gems"
require "coverage"
require "json"

# `ruzzy cov`: a coverage report of a corpus, checked against Ruby's own
# Coverage, with raising and process-killing inputs, and rendered in a real
# browser.
class TestCov < Minitest::Test
  include InstalledGems

  HELLO = File.join(EXAMPLES, "hello.rb")
  HELLO_LIB = File.join(EXAMPLES, "lib", "hello.rb")
  CORPUS = File.join(__dir__, "fuzz", "hello_parser")
  FAULTS = File.join(FIXTURES, "c_ext", "faults.c")

  def cov(dir, *args)
    ruzzy("cov", "-o", "report", *args, chdir: dir)
  end

  def resultset(dir)
    JSON.parse(File.read(File.join(dir, "report", ".resultset.json"))).fetch("ruzzy cov").fetch("coverage")
  end

  def test_report_of_a_saved_corpus_agrees_with_rubys_coverage
    in_tmpdir do |dir|
      result = cov(dir, HELLO, CORPUS)
      assert_exit 0, result
      scope = Regexp.escape("files of your code (--all for every file);")
      summary = %r{ruzzy cov: 4 inputs \(0 raised, 0 crashed the process\); \d+ #{scope} lines \d+/\d+ \(\d+\.\d%\)}
      assert_match(summary, result.stdout)
      %w[index.html lcov.info .resultset.json].each { |file| assert File.file?(File.join(dir, "report", file)), file }
      ours = resultset(dir).fetch(HELLO_LIB)

      ::Coverage.start(lines: true, branches: true)
      load HELLO_LIB
      Dir.children(CORPUS).sort.each { |name| Hello.parse(File.binread(File.join(CORPUS, name))) }
      rubys = ::Coverage.result.fetch(HELLO_LIB)
      assert_equal rubys[:lines], ours["lines"]
      expected = rubys[:branches].to_h { |branch, arms| [branch.inspect, arms.transform_keys(&:inspect)] }
      assert_equal expected, ours["branches"]
      assert_match(/^SF:#{Regexp.escape(HELLO_LIB)}$/, File.read(File.join(dir, "report", "lcov.info")))
    end
  end

  def test_raising_inputs_count_and_are_listed
    in_tmpdir do |dir|
      corpus = File.join(dir, "corpus")
      FileUtils.cp_r(CORPUS, corpus)
      File.write(File.join(corpus, "fuz"), "FUZ")
      result = cov(dir, HELLO, corpus)
      assert_exit 0, result
      assert_match(/5 inputs \(1 raised, 0 crashed the process\)/, result.stdout)
      source = File.readlines(HELLO_LIB)
      lines = resultset(dir).fetch(HELLO_LIB)["lines"]
      assert_equal 3, lines[source.index { |line| line.include?("raise \"Hello.parse") }], "fu, fun and FUZ"
      assert_equal 2, lines[source.index { |line| line.strip == ":ok" }], "FUZ raised before :ok"
    end
  end

  # Inputs that raise are named, so that they can be acted on: a few in the
  # summary, one per exception (file, class, message), and all of them in
  # the report directory's raised.txt and index.html.
  def test_the_inputs_that_raise_are_named_with_their_exceptions
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        Ruzzy.fuzz(lambda do |data|
          raise KeyError, "no key #{data[1..].inspect}\nsecond line" if data.start_with?("K")
          raise ArgumentError, "bad argument" if data.start_with?("A")
          Integer(data) if data.start_with?("I")
          nil
        end)
      RUBY
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      inputs = { "a1" => "A1", "a2" => "A2", "a3" => "A3", "int" => "Ix", "k" => "Kz", "ok" => "fine" }
      inputs.each { |name, data| File.write(File.join(corpus, name), data) }
      result = cov(dir, "harness.rb", corpus)
      assert_exit 0, result
      assert_match(/6 inputs \(5 raised, 0 crashed the process\)/, result.stdout)
      assert_match(%r{^  raised: corpus/a1: ArgumentError: bad argument \(and 2 more inputs like it\)$}, result.stdout)
      assert_match(%r{^  raised: corpus/int: ArgumentError: invalid value for Integer\(\): "Ix"$}, result.stdout)
      assert_match(%r{^  raised: corpus/k: KeyError: no key "z"$}, result.stdout)
      assert_match(%r{^ruzzy cov: every input that raised, with its exception: report/raised\.txt$}, result.stdout)
      listed = File.readlines(File.join(dir, "report", "raised.txt"), chomp: true)
      assert_equal 5, listed.size, listed.join("\n")
      assert_includes listed, "corpus/a3: ArgumentError: bad argument"
      assert_includes listed, 'corpus/k: KeyError: no key "z"\nsecond line'
      html = File.read(File.join(dir, "report", "index.html"))
      assert_match(%r{<h2>Inputs that raised</h2><ul id="raised">.*corpus/a2: ArgumentError: bad argument}m, html)
    end
  end

  # Many inputs raising many different exceptions: the summary shows a few
  # and says how many more there are.
  def test_the_summary_names_a_few_raising_inputs_and_counts_the_rest
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { raise IndexError, \"input \#{data}\" })")
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      10.times { |index| File.write(File.join(corpus, "in-#{index}"), index.to_s) }
      result = cov(dir, "harness.rb", corpus)
      assert_exit 0, result
      shown = result.stdout.scan(/^  raised: /).size
      assert_equal 3, shown, result.stdout
      assert_match(/^  \.\.\. and 7 more inputs that raised$/, result.stdout)
      assert_equal 10, File.readlines(File.join(dir, "report", "raised.txt")).size
    end
  end

  def test_an_input_that_kills_the_process_does_not_lose_the_report
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        def classify(data) = data.start_with?("a") ? :a : :other
        Ruzzy.fuzz(->(data) { Faults.segv(data); classify(data); nil })
      RUBY
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      { "1-a" => "apple", "2-crash" => "SEGV", "3-b" => "banana" }.each do |name, data|
        File.write(File.join(corpus, name), data)
      end
      result = cov(dir, "harness.rb", corpus)
      assert_exit 0, result
      assert_match(/3 inputs \(0 raised, 1 crashed the process\)/, result.stdout)
      assert_match(%r{crashed the process: .*/corpus/2-crash}, result.stdout)
      lines = resultset(dir).fetch(File.join(dir, "harness.rb"))["lines"]
      assert_equal 2, lines[1], "both surviving inputs reached classify"
    end
  end

  def test_a_corpus_of_an_asan_built_extension_is_replayed_with_the_preload
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      build_c_extension(dir, FAULTS, sanitize: "address")
      write_harness(dir, <<~RUBY)
        require_relative "faults"
        def classify(data)
          data.start_with?("a") ? :a : :other
        end
        Ruzzy.fuzz(->(data) { Faults.overflow(data); classify(data); nil })
      RUBY
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      { "1-a" => "apple", "2-overflow" => "OVER", "3-b" => "banana" }.each do |name, data|
        File.write(File.join(corpus, name), data)
      end
      result = cov(dir, "harness.rb", corpus)
      assert_exit 0, result
      assert_match(/built with a sanitizer \(undefined symbol: __\w+\); replaying with --sanitizer=address/,
                   result.stderr)
      assert_match(/3 inputs \(0 raised, 1 crashed the process\)/, result.stdout)
      assert_match(%r{crashed the process: .*/corpus/2-overflow: .*AddressSanitizer: heap-buffer-overflow},
                   result.stdout)
      assert_equal 2, resultset(dir).fetch(File.join(dir, "harness.rb"))["lines"][3], "both other inputs"
      assert_match(%r{^ruzzy cov: C: functions [1-9]\d*/\d+, edges [1-9]\d*/\d+$}, result.stdout)
      html = File.read(File.join(dir, "report", "index.html"))
      assert_match(%r{<tr class="covered"><td>faults_overflow</td><td>[^<]*faults\.c:\d+</td><td>[1-9]\d*/\d+</td>},
                   html, "the extension's function the inputs reached, with its edges")
      assert_match(%r{<tr class="uncovered"><td>faults_segv</td>}, html)
    end
  end

  def test_a_replay_where_every_input_crashes_fails_with_the_reason
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { Process.kill(:SEGV, Process.pid) })")
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "a"), "a")
      File.write(File.join(corpus, "b"), "b")
      result = cov(dir, "harness.rb", corpus)
      assert_exit 1, result
      assert_match(%r{ruzzy cov: every input \(2\) crashed the process; the first, .*/corpus/a, ended with:},
                   result.stderr)
      refute File.exist?(File.join(dir, "report", "index.html")), "no report that would say nothing"
    end
  end

  def test_a_harness_that_fails_to_load_fails_the_replay
    in_tmpdir do |dir|
      write_harness(dir, "require 'no_such_library'")
      File.write(File.join(dir, "input"), "x")
      result = cov(dir, "harness.rb", "input")
      assert_exit 1, result
      assert_match(/ruzzy cov: the harness failed before replaying any input:\n.*no_such_library/m, result.stderr)
    end
  end

  def test_the_report_shows_the_users_code_unless_asked_for_more
    in_tmpdir do |dir|
      write_harness(dir, "require 'ipaddr'\nRuzzy.fuzz(->(data) { IPAddr.new(data) rescue nil; nil })")
      File.write(File.join(dir, "input"), "10.0.0.1")
      assert_exit 0, cov(dir, "harness.rb", "input")
      ipaddr = $LOAD_PATH.resolve_feature_path("ipaddr").last
      assert_equal [File.join(dir, "harness.rb"), ipaddr].sort, resultset(dir).keys.sort,
                   "the harness and the library it requires, not what that library loads (socket)"
      assert_exit 0, cov(dir, "--all", "harness.rb", "input")
      assert(resultset(dir).keys.any? { |path| path.end_with?("/socket.rb") }, "--all: what ipaddr loads too")
    end
  end

  # A library installed in a gem home, as `gem install` puts it: its files
  # are the user's code because the harness requires it, the gem it uses
  # in turn is not.
  def test_the_report_shows_an_installed_library_the_harness_requires
    in_tmpdir do |dir|
      home = File.join(dir, "gems")
      gems = install_tiny_gems(home)
      harness = write_harness(dir, "require 'tinyparse'\nRuzzy.fuzz(->(data) { Tinyparse.parse(data); nil })")
      File.write(File.join(dir, "input"), "12 ab")
      result = ruzzy("cov", "-o", "report", "harness.rb", "input", chdir: dir, env: gem_path_env(home))
      assert_exit 0, result
      expected = [harness, File.join(gems["tinyparse"], "lib", "tinyparse.rb"),
                  File.join(gems["tinyparse"], "lib", "tinyparse", "scanner.rb")]
      assert_equal expected.sort, resultset(dir).keys.sort, result.stdout
      assert_match(/3 files of your code/, result.stdout)
    end
  end

  # A harness of two libraries that Debian packages (ruby-erubi,
  # ruby-net-ldap).
  DEBIAN_LIBRARIES = <<~RUBY
    require "erubi"
    require "net/ldap"
    Ruzzy.fuzz(lambda do |data|
      Erubi::Engine.new(data.force_encoding(Encoding::UTF_8))
      Net::LDAP::Filter.construct(data)
      nil
    rescue ArgumentError, Net::LDAP::FilterSyntaxInvalidError, Net::LDAP::Error
      nil
    end)
  RUBY

  # Libraries from Debian's packages, installed with apt: erubi in
  # rubygems-integration's gem directory, net-ldap in vendor_ruby (its
  # gemspec in rubygems-integration lists net/ber/ as well).
  def test_the_report_shows_libraries_installed_by_debian_packages
    erubi = Gem::Specification.find_all_by_name("erubi").first
    # Debian 12 puts net-ldap in vendor_ruby, sid in rubygems-integration.
    ldap = $LOAD_PATH.resolve_feature_path("net/ldap")&.last || Gem.find_files("net/ldap.rb").first
    prerequisite! erubi && ldap, "Debian's ruby-erubi and ruby-net-ldap are not installed"
    vendor = File.dirname(ldap)
    in_tmpdir do |dir|
      harness = write_harness(dir, DEBIAN_LIBRARIES)
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      { "a" => "<%= 1 %>(cn=a*)", "b" => "(&(cn=x)(!(sn=y)))" }.each do |name, data|
        File.write(File.join(corpus, name), data)
      end
      result = cov(dir, "harness.rb", corpus)
      assert_exit 0, result
      files = resultset(dir).keys
      [harness, File.join(erubi.full_gem_path, "lib", "erubi.rb"), File.join(vendor, "ldap.rb"),
       File.join(vendor, "ldap", "filter.rb"), File.join(vendor, "ber", "ber_parser.rb")].each do |path|
        assert_includes files, path
      end
      libraries = [harness, "#{erubi.full_gem_path}/", "#{vendor}/"]
      others = files.reject { |path| libraries.any? { |library| path.start_with?(library) } }
      assert_empty others, "only the harness and the libraries it requires"
    end
  end

  def test_a_campaigns_coverage_over_time_is_plotted
    in_tmpdir do |dir|
      findings = File.join(dir, "ruzzy-findings")
      FileUtils.mkdir_p(findings)
      FileUtils.cp_r(CORPUS, File.join(findings, "corpus"))
      File.write(File.join(findings, "progress.csv"), <<~CSV)
        seconds,executions,coverage,corpus,findings,groups
        0.3,0,0,0,0,0
        5.0,1000,12,3,0,0
        10.0,2000,20,4,1,1
        15.0,3000,21,4,5,1
      CSV
      result = cov(dir, HELLO, File.join(findings, "corpus"))
      assert_exit 0, result
      assert_match(/^ruzzy cov: campaign: coverage 0 -> 21 in 15 s, 3000 executions, 1 finding group\(s\)$/,
                   result.stdout)
      html = File.read(File.join(dir, "report", "index.html"))
      points = html[/<polyline class="coverage" [^>]*points="([^"]*)"/, 1]
      assert_equal 4, points.split.size, "a point per row"
      assert_equal 1, html.scan('<line class="finding"').size, "a mark where the groups went from 0 to 1"
    end
  end

  # A campaign given its own corpus directory keeps its findings in
  # ruzzy-findings/: `ruzzy cov` on that corpus finds the campaign there
  # when its campaign.json ran the same harness.
  def test_the_plot_of_a_campaign_on_its_own_corpus_directory
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.start_with?('a') ? 1 : 2; nil })")
      FileUtils.cp(File.join(dir, "harness.rb"), File.join(dir, "other.rb"))
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "seed"), "b")
      assert_exit 0, ruzzy("--keep-going", "harness.rb", "corpus", "-seed=1", "-runs=#{runs(2000)}", chdir: dir)
      result = cov(dir, "harness.rb", "corpus")
      assert_exit 0, result
      assert_match(/^ruzzy cov: campaign: coverage \d+ -> \d+ in \d+ s, \d+ executions, 0 finding group\(s\)$/,
                   result.stdout)
      assert_includes File.read(File.join(dir, "report", "index.html")), '<svg id="progress"'
      other = cov(dir, "other.rb", "corpus")
      assert_exit 0, other
      refute_match(/campaign:/, other.stdout, "that campaign ran another harness")
    end
  end

  def test_include_limits_the_report
    in_tmpdir do |dir|
      assert_exit 0, cov(dir, "--include=examples/lib/", HELLO, CORPUS)
      assert_equal [HELLO_LIB], resultset(dir).keys
    end
  end

  def test_html_report_names_files_relative_to_the_project
    in_tmpdir do |dir|
      report = File.join(dir, "report")
      assert_exit 0, ruzzy("cov", "-o", report, HELLO, CORPUS, chdir: ROOT)
      html = File.read(File.join(report, "index.html"))
      assert_includes html, ">examples/lib/hello.rb</a>", "a file under the working directory, relative to it"
      refute_includes html, HELLO_LIB, "no absolute path of this machine in the page"
      assert_match(/^SF:#{Regexp.escape(HELLO_LIB)}$/, File.read(File.join(report, "lcov.info")),
                   "lcov.info keeps absolute paths, as genhtml and CI services read them")
    end
  end

  def test_html_report_in_a_real_browser
    browser = %w[chromium chromium-browser google-chrome].find { |name| system("which #{name} >/dev/null 2>&1") }
    prerequisite! browser, "no Chromium installed"
    in_tmpdir do |dir|
      campaign = File.join(dir, "campaign")
      FileUtils.mkdir_p(campaign)
      File.write(File.join(campaign, "progress.csv"), "seconds,executions,coverage,corpus,findings,groups\n" \
                                                      "0,0,0,0,0,0\n5,100,8,2,0,0\n9,200,11,3,1,1\n")
      assert_exit 0, cov(dir, "--campaign=#{campaign}", HELLO, CORPUS)
      page = "file://#{File.join(dir, "report", "index.html")}"
      flags = %w[--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
                 --disable-sync --no-first-run]
      dom = run_command(browser, *flags, "--user-data-dir=#{File.join(dir, "profile")}", "--dump-dom", page)
      assert_exit 0, dom
      assert_match(%r{<h1>ruzzy coverage</h1>}, dom.stdout)
      assert_match(/ruzzy cov: 4 inputs/, dom.stdout)
      assert_match(%r{<a href="#file-\d+">#{Regexp.escape(HELLO_LIB)}</a>}, dom.stdout)
      assert_match(/<tr class="covered">.*return :empty if data\.empty\?/, dom.stdout)
      assert_match(/<tr class="partial">[^\n]*raise "Hello\.parse[^\n]*branch not taken: then/, dom.stdout)
      assert_match(/first: empty/, dom.stdout)
      assert_match(/<svg id="progress"[^>]*>.*<polyline class="coverage"[^>]*points="[\d., ]+"/m, dom.stdout)
      shot = File.join(dir, "report.png")
      run_command(browser, *flags, "--user-data-dir=#{File.join(dir, "profile")}", "--window-size=1000,700",
                  "--screenshot=#{shot}", page)
      assert_operator File.size?(shot).to_i, :>, 10_000, "the page should render to a non-trivial screenshot"
    end
  end
end

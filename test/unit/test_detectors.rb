# frozen_string_literal: true

require_relative "../test_helper"
require "etc"
require "socket"
require_relative "../support/database_servers"

# The bug detectors (docs/detectors.md): each example app's bug is found,
# its safe twin is not, the hooks change nothing else, and the findings can
# be replayed, silenced and turned off.
class TestDetectors < Minitest::Test
  # The command injection example reaches Kernel#system with and without
  # the detectors; the sandbox must keep every command from running. A
  # `ping` first on PATH would leave a mark.
  def test_the_examples_never_run_a_command
    in_tmpdir do |dir|
      bin = File.join(dir, "bin")
      FileUtils.mkdir_p(bin)
      mark = File.join(dir, "ran")
      File.write(File.join(bin, "ping"), "#!/bin/sh\necho \"$@\" >> #{mark}\n")
      File.chmod(0o755, File.join(bin, "ping"))
      ruzzy_path = ENV.fetch("PATH").split(File::PATH_SEPARATOR).map { |path| File.join(path, "ruzzy") }
                      .find { |path| File.executable?(path) }
      env = { "PATH" => "#{bin}:#{ENV.fetch("PATH")}" }
      harness = File.join(DETECTORS, "command_injection", "fuzz.rb")
      assert_exit 0, run_command(ruzzy_path, "--disable-detectors=all", harness, "-seed=1", "-runs=#{runs(5000)}",
                                 chdir: dir, env:)
      run_command(ruzzy_path, harness, "-seed=1", "-runs=#{runs(5000)}", chdir: dir, env:)
      system(env, "ping", "-c", "1", "probe", exception: true)
      assert_equal "-c 1 probe\n", File.read(mark), "only the test's own probe ran ping"
    end
  end

  def test_sinks_behave_as_without_detectors
    plain = ruby(File.join(FIXTURES, "detectors", "sinks.rb"))
    assert_exit 0, plain
    fuzzed = ruby(File.join(FIXTURES, "detectors", "sinks.rb"), "fuzz")
    assert_exit 0, fuzzed
    assert_equal plain.stdout, fuzzed.stdout
    assert_match(/^system array: true$/, plain.stdout)
    assert_match(%r{^read: "\.\./ruzzy /ruzzy"$}, plain.stdout)
  end

  def test_a_rescue_does_not_hide_a_finding_and_ignore_silences_it
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        ignore = ENV["IGNORE"] ? [Ruzzy::Detectors::CommandInjection] : nil
        Ruzzy.fuzz(->(data) { begin; IO.popen("echo;ruzzy"); rescue Exception; end; nil }, ignore:)
      RUBY
      found = ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_exit 77, found
      assert_match(/IO.popen would run the command "ruzzy" in "echo;ruzzy"/, found.stderr)
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "IGNORE" => "1" })
      assert_exit 0, ruzzy("--ignore=Ruzzy::Detectors::CommandInjection", "harness.rb", "-runs=10", chdir: dir)
    end
  end

  # The input's command, whatever the program appends to it, is the
  # input's choice; a longer word that merely starts with the canary is not
  # the canary.
  def test_a_command_the_program_appends_a_suffix_to_is_the_inputs
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(->(data) { system("true \#{ENV.fetch("NAME")}.tar.gz 2>/dev/null"); nil })
      RUBY
      found = ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "NAME" => "x;ruzzy" })
      assert_exit 77, found
      assert_match(/Kernel#system would run the command "ruzzy.tar.gz" in "true x;ruzzy.tar.gz/, found.stderr)
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "NAME" => "x;ruzzyish" })
    end
  end

  # A command with a NUL byte never runs: Ruby's own ArgumentError, raised
  # by the call, is the finding, never one of the detector's own (it read
  # the canary's name with File.basename, which raised "path name contains
  # null byte" in the hook) nor a command injection.
  def test_a_command_with_a_nul_byte_is_left_to_the_call
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        Ruzzy.fuzz(lambda { |data|
          case ENV.fetch("SINK")
          when "backtick" then `true --to=#{data} 2>/dev/null`
          when "program" then system(data, "x")
          end
          nil
        })
      RUBY
      %w[backtick program].each do |sink|
        result = run_sink(dir, sink, "\nruzzy\0\0x", {})
        assert_exit 77, result
        assert_match(/^ArgumentError: string contains null byte$/, result.stderr, sink)
        refute_match(/CommandInjection/, result.stderr, sink)
      end
      assert_sink_found(dir, "backtick", "\nruzzy", /Kernel#` would run the command "ruzzy"/)
    end
  end

  def test_detectors_can_be_turned_off_by_name
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        setting = ENV["SETTING"] ? ENV["SETTING"].split(",").map(&:to_sym) : Ruzzy.session.detectors
        setting = false if ENV["SETTING"] == "false"
        Ruzzy.fuzz(->(data) { File.exist?("x") || Dir.children("/ruzzy") rescue nil; nil }, detectors: setting)
      RUBY
      assert_exit 77, ruzzy("harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("--disable-detectors=path_traversal", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("--disable-detectors=all", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "false" })
      assert_exit 0, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "redos,command_injection" })
      assert_exit 77, ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "path_traversal" })

      unknown = ruzzy("--disable-detectors=path,redos", "harness.rb", "-runs=10", chdir: dir)
      assert_exit 2, unknown
      require "ruzzy/detectors"
      assert_includes unknown.stderr, "unknown detector path (known: #{Ruzzy::Detectors.names.join(", ")})"
      keyword = ruzzy("harness.rb", "-runs=10", chdir: dir, env: { "SETTING" => "sql" })
      assert_exit 1, keyword
      assert_match(/detectors: unknown detector sql/, keyword.stderr)
    end
  end

  def test_list_detectors
    result = ruzzy("--list-detectors")
    assert_exit 0, result
    %w[command_injection path_traversal deserialization code_injection redos regexp_injection ssrf
       sql_injection xpath_injection ldap_injection].each do |name|
      assert_match(/^  #{name}  +\S/, result.stdout)
    end
  end

  # Connects as the input's first byte says to the test's own server on
  # 127.0.0.1 (PORT), or to a name that does not resolve.
  NETWORK_HARNESS = <<~'RUBY'
    require "socket"
    require "net/http"
    require "open-uri"
    port = Integer(ENV.fetch("PORT"))
    allowed_port = ENV["ALLOW_PORT"] == "server" ? port : ENV["ALLOW_PORT"]
    Ruzzy::Detectors.allow_network(host: ENV["ALLOW_HOST"], port: allowed_port) if ENV["ALLOW_HOST"]
    Ruzzy.fuzz(lambda { |data|
      case data[0]
      when "T" then TCPSocket.new("127.0.0.1", port).close
      when "H" then Net::HTTP.get(URI("http://ruzzy.invalid/"))
      when "S" then Socket.new(:INET, :STREAM).connect(Socket.sockaddr_in(port, "127.0.0.1"))
      when "O" then URI.open("http://127.0.0.1:#{port}/").read
      end
      nil
    })
  RUBY

  # Runs NETWORK_HARNESS on +input+; returns the result and how many
  # connections the server got (queued: the harness never reads).
  def network_run(dir, input, *flags, env: {})
    File.write(File.join(dir, "input"), input)
    TCPServer.open("127.0.0.1", 0) do |server|
      result = ruzzy(*flags, "harness.rb", "input", chdir: dir, env: { "PORT" => server.addr[1].to_s, **env })
      connections = 0
      while (client = server.accept_nonblock(exception: false)).is_a?(BasicSocket)
        connections += 1
        client.close
      end
      [result, connections]
    end
  end

  def test_a_connection_the_harness_did_not_allow_is_reported_before_it_is_made
    in_tmpdir do |dir|
      write_harness(dir, NETWORK_HARNESS)
      {
        "T" => /TCPSocket.new would connect to 127.0.0.1:\d+, a destination the harness did not allow/,
        "H" => /(?:Socket.tcp|TCPSocket.new) would connect to ruzzy.invalid:80, a destination/, # by net-http's version
        "S" => /Socket#connect would connect to 127.0.0.1:\d+, a destination/,
        "O" => /(?:Socket.tcp|TCPSocket.new) would connect to 127.0.0.1:\d+, a destination/ # open-uri
      }.each do |input, message|
        result, connections = network_run(dir, input)
        assert_exit 77, result
        assert_match(/bug detector ssrf fired in the fuzz target/, result.stderr)
        assert_match(/^Ruzzy::Detectors::SSRF: server-side request forgery: #{message}/, result.stderr)
        assert_equal 0, connections, "the connection was never made (#{input})"
      end
    end
  end

  def test_allowed_connections_pass
    in_tmpdir do |dir|
      write_harness(dir, NETWORK_HARNESS)
      # An address and port, a name (by its addresses), any port.
      [%w[127.0.0.1 server], %w[localhost server], ["127.0.0.1"]].each do |host, port|
        result, connections = network_run(dir, "T", env: { "ALLOW_HOST" => host, "ALLOW_PORT" => port })
        assert_exit 0, result
        assert_equal 1, connections, "allowed: #{host}"
      end
      assert_exit 77, network_run(dir, "T", env: { "ALLOW_HOST" => "127.0.0.1", "ALLOW_PORT" => "1" }).first
      assert_exit 0, network_run(dir, "T", "--disable-detectors=ssrf").first
    end
  end

  def test_allow_network_rejects_what_it_cannot_use
    result = ruby("-rruzzy", "-e", <<~RUBY)
      [{ host: 1 }, { port: 70_000 }, { port: "no-such-service" }].each do |arguments|
        Ruzzy::Detectors.allow_network(**arguments)
      rescue ArgumentError => e
        puts e.message
      end
    RUBY
    assert_exit 0, result
    assert_equal ["allow_network: host: must be a String, an IPAddr or nil, not Integer",
                  "allow_network: port: must be an Integer from 0 to 65535 or a service",
                  'allow_network: port: unknown service "no-such-service"'], result.stdout.lines(chomp: true)
  end

  # C code's connections (a C extension calling connect) meet the backstop,
  # also from an extension the fuzz target loads (from the next input on).
  def test_c_code_connecting_is_caught_by_the_backstop
    in_tmpdir do |dir|
      build_plain_extension(dir)
      write_harness(dir, <<~'RUBY')
        require_relative "faults" unless ENV["LATE"]
        Ruzzy::Detectors.allow_network(host: "127.0.0.1", port: 9) if ENV["ALLOW"]
        Ruzzy.fuzz(lambda { |data|
          require_relative "faults"
          $stderr.puts("connect errno #{Faults.connect(data)}") if data == "N"
          nil
        })
      RUBY
      File.write(File.join(dir, "input"), "N")
      File.write(File.join(dir, "first"), "x")
      refused = ruzzy("harness.rb", "input", chdir: dir)
      assert_exit 77, refused
      assert_match(/^connect errno #{Errno::EACCES::Errno}$/, refused.stderr, "refused before it was made")
      assert_match(/native code called connect\(\) to 127.0.0.1:9, a destination the harness did not allow/,
                   refused.stderr)
      late = ruzzy("harness.rb", "first", "input", chdir: dir, env: { "LATE" => "1" })
      assert_exit 77, late
      assert_match(/native code called connect\(\) to 127.0.0.1:9/, late.stderr)
      allowed = ruzzy("harness.rb", "input", chdir: dir, env: { "ALLOW" => "1" })
      assert_exit 0, allowed
      assert_match(/^connect errno #{Errno::ECONNREFUSED::Errno}$/, allowed.stderr, "made, and refused by the port")
    end
  end

  def test_a_pattern_the_input_breaks_is_reported_even_when_rescued
    in_tmpdir do |dir|
      write_harness(dir, <<~'RUBY')
        Ruzzy.fuzz(lambda { |data|
          text = data.dup.force_encoding(Encoding::UTF_8)
          pattern = ENV["ESCAPE"] ? Regexp.escape(text) : text
          "abc".match?(ENV["LITERAL"] ? /x#{pattern}/ : Regexp.new(pattern)) rescue RegexpError
          nil
        })
      RUBY
      File.write(File.join(dir, "input"), "a(")
      found = ruzzy("harness.rb", "input", chdir: dir)
      assert_exit 77, found
      assert_match(/^Ruzzy::Detectors::RegexpInjection: regular expression injection: a pattern built from the input/,
                   found.stderr)
      assert_match(/failed to compile \(end pattern with unmatched parenthesis/, found.stderr)
      assert_exit 77, ruzzy("harness.rb", "input", chdir: dir, env: { "LITERAL" => "1" })
      assert_exit 0, ruzzy("harness.rb", "input", chdir: dir, env: { "ESCAPE" => "1" })
      # Bytes invalid in UTF-8 break an escaped pattern too: no injection.
      File.binwrite(File.join(dir, "input"), "a\xff(")
      assert_exit 0, ruzzy("harness.rb", "input", chdir: dir, env: { "ESCAPE" => "1" })
    end
  end

  # Runs harness.rb in +dir+ (its SINK set to +sink+) on +input+, which
  # must be reported: exit 77 and a report matching every one of +messages+.
  def assert_sink_found(dir, sink, input, *messages, env: {})
    result = run_sink(dir, sink, input, env)
    assert_exit 77, result
    messages.each { |message| assert_match message, result.stderr }
  end

  # As assert_sink_found, for an +input+ that is no finding: exit 0.
  def assert_sink_safe(dir, sink, input, env: {})
    assert_exit 0, run_sink(dir, sink, input, env)
  end

  def run_sink(dir, sink, input, env)
    File.write(File.join(dir, "input"), input)
    ruzzy("harness.rb", "input", chdir: dir, env: env.merge("SINK" => sink))
  end

  # A path under files/ of the harness's directory, opened or only probed
  # (as Sinatra's send_file and static file handlers do before opening).
  PATH_HARNESS = <<~'RUBY'
    require "pathname"
    $stdout.sync = true
    FILES = File.join(Dir.pwd, "files")
    Ruzzy.fuzz(lambda { |data|
      path = File.join(FILES, data)
      case ENV.fetch("SINK")
      when "read" then File.read(path) rescue SystemCallError
      when "file?" then File.file?(path)
      when "mtime" then File.mtime(path) rescue SystemCallError
      when "stat" then File.stat(path) rescue SystemCallError
      when "filetest" then FileTest.exist?(path)
      when "dir" then Dir.exist?(path)
      when "pathname" then Pathname.new(path).exist?
      when "realpath" then File.realpath(path) rescue SystemCallError
      when "basename" then File.file?(File.join(FILES, File.basename(data)))
      when "extension" then File.exist?("#{path}.md")
      when "require"
        # RubyGems' require probes each entry: the load path is no input.
        $LOAD_PATH.unshift(File.join(FILES, "..", "ruzzy"), File.join(Dir.pwd, "lib"))
        require "probed_lib"
      when "answers"
        puts [File.file?(path), File.exist?(path), File.size?(path), File.stat(path).size, File.directory?(FILES),
              FileTest.exist?(path), Dir.exist?(FILES), File.realpath(path) == path].inspect
      end
      nil
    })
  RUBY

  def test_a_path_out_of_its_directory_is_reported_opened_or_probed
    in_tmpdir do |dir|
      write_harness(dir, PATH_HARNESS)
      FileUtils.mkdir_p(File.join(dir, "files"))
      File.write(File.join(dir, "files", "a.txt"), "abc")
      {
        "read" => "IO.read", "file?" => "File.file?", "mtime" => "File.mtime", "stat" => "File.stat",
        "filetest" => "FileTest.exist?", "dir" => "Dir.exist?", "pathname" => "FileTest.exist?",
        "realpath" => "File.realpath"
      }.each do |sink, shown|
        assert_sink_found(dir, sink, "../ruzzy", /^Ruzzy::Detectors::PathTraversal: path traversal: /,
                          %r{ #{Regexp.escape(shown)} got "[^"]*/files/\.\./ruzzy", a path of the input's choosing})
      end
      assert_sink_found(dir, "file?", "..//ruzzy/x", %r{File.file\? got "[^"]*/files/\.\.//ruzzy/x"})
      # The extension a program appends to the name it was given.
      assert_sink_found(dir, "extension", "../ruzzy", %r{File.exist\? got "[^"]*/files/\.\./ruzzy\.md"})
      # The last component only; ".." that leads elsewhere; another name.
      assert_sink_safe(dir, "basename", "../ruzzy")
      ["a/../b", "../ruzzyx", "../a.txt"].each { |input| assert_sink_safe(dir, "file?", input) }
      FileUtils.mkdir_p(File.join(dir, "lib"))
      File.write(File.join(dir, "lib", "probed_lib.rb"), "")
      assert_sink_safe(dir, "require", "x")
      # The probes answer as without the detector.
      answers = run_sink(dir, "answers", "a.txt", {})
      assert_exit 0, answers
      assert_equal "[true, true, 3, 3, true, true, true, true]\n", answers.stdout
    end
  end

  # SQL through sqlite3 (a real database) and Sequel's mock adapter (no
  # database: the query text alone).
  SQL_HARNESS = <<~'RUBY'
    require "sqlite3"
    require "sequel"
    db = SQLite3::Database.new(":memory:")
    db.execute("CREATE TABLE users (name TEXT)")
    mock = Sequel.mock
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "sqlite" then db.execute("SELECT * FROM users WHERE name = '#{data}'") rescue SQLite3::Exception
      when "sqlite_bound" then db.execute("SELECT * FROM users WHERE name = ?", [data])
      when "sequel" then mock["SELECT * FROM users WHERE name = '#{data}'"].all
      when "sequel_dataset" then mock[:users].where(name: data).all
      end
      nil
    })
  RUBY

  def test_sql_the_input_wrote_or_broke_is_reported
    in_tmpdir do |dir|
      write_harness(dir, SQL_HARNESS)
      {
        %w[sqlite x'ruzzy'] => /Statement.new got the query "SELECT .* name = 'x'ruzzy''", where the input wrote SQL/,
        %w[sqlite x'] => /the database rejected the syntax of the query .* \(SQLite3::SQLException: unrecognized token/,
        ["sqlite", "x' = = '"] => /the database rejected the syntax of the query .*: near "=": syntax error/,
        ["sequel", "' or ruzzy or '"] => /Database#log_connection_yield got the query .* \(ruzzy outside any lit/
      }.each do |(sink, input), message|
        assert_sink_found(dir, sink, input, /^Ruzzy::Detectors::SQLInjection: SQL injection: /, message)
      end
      # A bound parameter, a value Sequel quotes, and the canary inside a
      # literal are data.
      [["sqlite_bound", "' or ruzzy or '"], ["sequel_dataset", "' or ruzzy or '"],
       %w[sqlite ruzzy]].each { |sink, input| assert_sink_safe(dir, sink, input) }
    end
  end

  AR_HARNESS = <<~'RUBY'
    require "active_record"
    ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: ":memory:")
    ActiveRecord::Base.connection.execute("CREATE TABLE users (name TEXT)")
    class User < ActiveRecord::Base; end
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "where" then User.where("name = '#{data}'").to_a rescue ActiveRecord::StatementInvalid
      when "utf8" then User.where("name = '#{data.dup.force_encoding(Encoding::UTF_8)}'").to_a rescue ActiveRecord::StatementInvalid
      when "bound" then User.where(name: data).to_a
      when "placeholder" then User.where("name = ?", data).to_a
      end
      nil
    })
  RUBY

  # Active Record through its SQLite adapter: seen at the driver, and its
  # ActiveRecord::StatementInvalid (a StandardError) cannot swallow the
  # finding.
  def test_sql_from_active_record_is_seen_at_the_driver
    in_tmpdir do |dir|
      write_harness(dir, AR_HARNESS)
      {
        %w[where x'] => /rejected the syntax of the query "SELECT .* WHERE \(name = 'x''\)" \(SQLite3::SQLException/,
        # A query in UTF-8 beyond ASCII, and SQLite's binary message quoting
        # it (a Rails param): the finding, not an Encoding::CompatibilityError.
        ["utf8", "\u00e9' \u00e9"] =>
          /rejected the syntax of the query "SELECT .* \(name = '\u00e9' \u00e9'\)" .*near "\u00e9"/,
        ["where", "' or ruzzy or '"] => /Statement.new got the query "SELECT .* \(name = '' or ruzzy or ''\)", where/
      }.each { |(sink, input), message| assert_sink_found(dir, sink, input, message) }
      [["bound", "' or ruzzy or '"], ["placeholder", "' or ruzzy or '"]].each do |sink, input|
        assert_sink_safe(dir, sink, input)
      end
    end
  end

  PG_HARNESS = <<~'RUBY'
    require "pg"
    connection = PG.connect
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "exec" then connection.exec("SELECT 1 WHERE 'a' = '#{data}'") rescue PG::Error
      when "prepare" then connection.prepare("", "SELECT 1 WHERE 'a' = '#{data}'") rescue PG::Error
      when "params" then connection.exec_params("SELECT 1 WHERE 'a' = $1", [data])
      when "dollar" then connection.exec("SELECT $q$#{data}$q$")
      end
      nil
    })
  RUBY

  # Debian builds ruby-pg for its default Ruby only, and its sources are not
  # on the mirror: Ruby 3.4 has no pg to test with (bin/rubies).
  if RUBY_VERSION < "3.4"
    def test_sql_postgresql_rejects_or_the_input_wrote_is_reported
      prerequisite!(DatabaseServers::Postgres.available?, "a PostgreSQL server (apt-get install postgresql; root)")
      DatabaseServers::Postgres.run do |server|
        in_tmpdir do |dir|
          write_harness(dir, PG_HARNESS)
          {
            %w[exec x'] => /rejected the syntax of the query "SELECT 1 WHERE 'a' = 'x''" \(PG::SyntaxError: /,
            ["exec", "' or ruzzy or '"] => /PG::Connection#exec got the query .* \(ruzzy outside any literal\)/,
            ["prepare", "x' = = '"] => /rejected the syntax of the query .* \(PG::SyntaxError: .*"="/
          }.each { |(sink, input), message| assert_sink_found(dir, sink, input, message, env: server) }
          # A bound parameter, the canary in a dollar-quoted literal, and an
          # error that is not about syntax (no such column).
          [["params", "' or ruzzy or '"], %w[dollar ruzzy], ["exec", "' || nosuchcolumn || '"]].each do |sink, input|
            assert_sink_safe(dir, sink, input, env: server)
          end
        end
      end
    end
  end

  MYSQL_HARNESS = <<~'RUBY'
    require "mysql2"
    client = Mysql2::Client.new(socket: ENV.fetch("MYSQL_UNIX_PORT"), username: "root")
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "query" then client.query("SELECT 1 FROM DUAL WHERE 'a' = '#{data}'") rescue Mysql2::Error
      when "escaped" then client.query("SELECT 1 FROM DUAL WHERE 'a' = '#{client.escape(data)}'")
      when "prepare" then client.prepare("SELECT 1 FROM DUAL WHERE 'a' = ?").execute(data)
      end
      nil
    })
  RUBY

  # Debian builds ruby-mysql2 for its default Ruby only, and its sources
  # are not on the mirror: Ruby 3.4 has no mysql2 to test with (bin/rubies).
  if RUBY_VERSION < "3.4"
    def test_sql_mysql_rejects_or_the_input_wrote_is_reported
      prerequisite!(DatabaseServers::MariaDB.available?, "a MariaDB server (apt-get install mariadb-server; root)")
      DatabaseServers::MariaDB.run do |server|
        in_tmpdir do |dir|
          write_harness(dir, MYSQL_HARNESS)
          {
            %w[query x'] => /rejected the syntax of the query "SELECT 1 .* = 'x''" \(Mysql2::Error: You have an/,
            ["query", "' or ruzzy or '"] => /Mysql2::Client#query got the query .* \(ruzzy outside any literal\)/
          }.each { |(sink, input), message| assert_sink_found(dir, sink, input, message, env: server) }
          # Backslash escapes (what Mysql2::Client#escape writes) keep the
          # canary in its literal; a bound parameter is never in the text.
          [["escaped", "' or ruzzy or '"], ["escaped", "\\' or ruzzy -- "],
           ["prepare", "' or ruzzy or '"]].each { |sink, input| assert_sink_safe(dir, sink, input, env: server) }
        end
      end
    end
  end

  QUERY_HARNESS = <<~'RUBY'
    require "rexml/document"
    require "net/ldap"
    require "nokogiri"
    doc = REXML::Document.new("<users><user name='a'/></users>")
    noko = Nokogiri::XML("<users><user name='a'/></users>")
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "xpath" then REXML::XPath.first(doc, "//user[@name='#{data}']")
      when "xpath_variable" then REXML::XPath.first(doc, "//user[@name=$name]", nil, { "name" => data })
      when "nokogiri" then noko.at_xpath("//user[@name='#{data}']")
      when "nokogiri_search" then noko.search("//user[@name='#{data}']")
      when "nokogiri_variable" then noko.xpath("//user[@name=$name]", nil, { "name" => data })
      when "nokogiri_css" then noko.css(data)
      when "ldap" then Net::LDAP::Filter.construct("(&(objectClass=person)(uid=#{data}))")
      when "ldap_escaped" then Net::LDAP::Filter.construct("(uid=#{Net::LDAP::Filter.escape(data)})")
      end
      nil
    })
  RUBY

  def test_xpath_and_ldap_filters_the_input_wrote_are_reported
    in_tmpdir do |dir|
      write_harness(dir, QUERY_HARNESS)
      {
        ["xpath", "' or ruzzy or '"] => /XPath injection: REXML::Parsers::XPathParser#parse got the expression /,
        ["nokogiri", "' or ruzzy or '"] => /XPath injection: Nokogiri::XML::Searchable#at_xpath got the expression /,
        ["nokogiri_search", "' or ruzzy or '"] => /XPath injection: Nokogiri::XML::Searchable#search got the /,
        ["ldap", "*)(ruzzy=*"] => /LDAP injection: Net::LDAP::Filter.construct got the filter "\(&\(objectClass/
      }.each { |(sink, input), message| assert_sink_found(dir, sink, input, message) }
      # The canary as data: inside a literal, a variable, an escaped value;
      # and a CSS selector, which is not XPath.
      [%w[xpath ruzzy], ["xpath_variable", "' or ruzzy or '"], %w[nokogiri ruzzy],
       ["nokogiri_variable", "' or ruzzy or '"], %w[nokogiri_css ruzzy], %w[ldap ruzzy],
       ["ldap_escaped", "*)(ruzzy=*"]].each { |sink, input| assert_sink_safe(dir, sink, input) }
    end
  end

  XML_HARNESS = <<~'RUBY'
    require "nokogiri"
    require "stringio"
    Ruzzy.fuzz(lambda { |data|
      case ENV.fetch("SINK")
      when "noent" then Nokogiri::XML(data) { |config| config.noent }
      when "dtdload" then Nokogiri::XML(data) { |config| config.dtdload }
      when "io" then Nokogiri::XML(StringIO.new(data)) { |config| config.noent }
      when "strict" then Nokogiri::XML(data) { |config| config.strict.noent }
      when "default" then Nokogiri::XML(data)
      end
      nil
    })
  RUBY

  def test_xml_parsed_with_external_entities_loading_the_canary_is_reported
    in_tmpdir do |dir|
      write_harness(dir, XML_HARNESS)
      entity = %(<!DOCTYPE r [<!ENTITY ruzzy SYSTEM "/ruzzy">]><r>&ruzzy;</r>)
      {
        ["noent", entity] => /Document.read_memory parsed "<!DOCTYPE r .*" with NOENT on, and libxml2 loaded /,
        ["dtdload", %(<!DOCTYPE r SYSTEM "/ruzzy"><r/>)] => /with DTDLOAD on, and libxml2 loaded the external /,
        ["io", entity] => /Document.read_io parsed a document with NOENT on/,
        ["strict", entity] => /with NOENT on/
      }.each do |(sink, input), message|
        assert_sink_found(dir, sink, input, /^Ruzzy::Detectors::XXE: XML external entity: Nokogiri::XML::/, message)
      end
      # Nokogiri's defaults load nothing; an internal entity, and an
      # external one that is not the canary, are no finding.
      [["default", entity], ["noent", %(<!DOCTYPE r [<!ENTITY e "ruzzy">]><r>&e;</r>)],
       # libxml2's message cuts the comment's text inside a character.
       ["noent", "<<!--#{"\uFFFD" * 30}"],
       ["noent", %(<!DOCTYPE r [<!ENTITY e SYSTEM "/nonexistent">]><r>&e;</r>)]].each do |sink, input|
        assert_sink_safe(dir, sink, input)
      end
    end
  end

  # A match that takes a share of the CPU time the redos detector allows
  # runs for longer than that on a core five other processes share; the
  # detector counts CPU time, so a busy machine (CI running several suites)
  # makes no finding that an idle one would not replay.
  def test_redos_counts_cpu_time_not_a_busy_cores_wall_clock
    text = redos_text_using(0.3)
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "corpus"))
      File.write(File.join(dir, "corpus", "slow"), text)
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda { |data|
          wall = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
          #{REDOS_PATTERN.inspect}.match?(data)
          if data.size > 3
            warn format("match: %.2f s wall, %.2f s CPU, limit %.2f s", Process.clock_gettime(Process::CLOCK_MONOTONIC) - wall,
                        Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - cpu, Ruzzy::Detectors::ReDoS::SECONDS)
          end
          nil
        }, detectors: %i[redos])
      RUBY
      # The core: one per Ruby minor version, so that bin/test's suites on
      # Ruby 3.3 and 3.4, which run at once, do not share theirs (twelve
      # processes on one core took the match past Regexp.timeout's 4 s).
      core = (RUBY_VERSION.split(".")[1].to_i % Etc.nprocessors).to_s
      busy = Array.new(5) { Process.spawn("taskset", "-c", core, "sh", "-c", "while :; do :; done") }
      begin
        result = run_command("taskset", "-c", core, "ruzzy", "harness.rb", "corpus", "-runs=0", chdir: dir)
      ensure
        busy.each { |pid| Process.kill(:KILL, pid) }
        Process.waitall
      end
      assert_exit 0, result
      wall, cpu, limit = result.stderr.match(/^match: (.*) s wall, (.*) s CPU, limit (.*) s$/).captures.map(&:to_f)
      assert_operator wall, :>, limit, "the premise: the match ran past the limit\n#{result.stderr}"
      assert_operator cpu, :<, limit
    end
  end

  REDOS_PATTERN = /\A(["'])(?:\w+\s?)*\1\z/

  # A text REDOS_PATTERN takes at least +seconds+ of CPU time (and about
  # less than twice that) to reject on this machine.
  def redos_text_using(seconds)
    (10..40).each do |length|
      text = "\"#{"r" * length}q"
      started = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      REDOS_PATTERN.match?(text)
      return text if Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - started >= seconds
    end
    flunk "no text up to 40 characters takes #{seconds} s to match"
  end
end

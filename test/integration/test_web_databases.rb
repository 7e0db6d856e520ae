# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/database_servers"

# `ruzzy rack` runs each request in a database transaction rolled back
# afterwards (docs/web-apps.md, "The test environment"), on the app's own
# Active Record database: SQLite, PostgreSQL and MariaDB alike. The app
# writes a row per request and fails if a row an earlier request wrote is
# still there, so a run of many requests ends without a finding only if
# every request's write was rolled back.
class TestWebDatabases < Minitest::Test
  APP = <<~'RUBY'
    require "active_record"
    require "json"
    config = JSON.parse(ENV.fetch("DATABASE"))
    if config["adapter"] == "mysql2"
      require "mysql2"
      Mysql2::Client.new(socket: config["socket"], username: "root").query("CREATE DATABASE IF NOT EXISTS ruzzy")
    end
    ActiveRecord::Base.establish_connection(config)
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define { create_table(:notes, force: true) { |table| table.string :body } }
    class Note < ActiveRecord::Base; end
    run(lambda do |env|
      raise "a row an earlier request wrote is still there" if Note.count.positive?

      Note.create!(body: "#{env["REQUEST_METHOD"]} #{env["PATH_INFO"].bytesize}")
      [201, { "content-type" => "text/plain" }, ["written"]]
    end)
  RUBY

  REQUESTS = 300

  def setup
    prerequisite!(system(RbConfig.ruby, "-e", "require 'active_record'; require 'rack'", err: File::NULL),
                  "Debian's ruby-activerecord and ruby-rack (bin/setup installs them)")
  end

  def test_each_request_on_sqlite_is_rolled_back
    assert_requests_rolled_back({ "adapter" => "sqlite3", "database" => ":memory:" })
  end

  # Debian builds ruby-pg and ruby-mysql2 for its default Ruby only: Ruby
  # 3.4 has neither (bin/rubies).
  if RUBY_VERSION < "3.4"
    def test_each_request_on_postgresql_is_rolled_back
      prerequisite!(DatabaseServers::Postgres.available?, "a PostgreSQL server (apt-get install postgresql; root)")
      DatabaseServers::Postgres.run do |server|
        assert_requests_rolled_back({ "adapter" => "postgresql", "database" => "postgres" }, server)
      end
    end

    def test_each_request_on_mariadb_is_rolled_back
      prerequisite!(DatabaseServers::MariaDB.available?, "a MariaDB server (apt-get install mariadb-server; root)")
      DatabaseServers::MariaDB.run do |server|
        config = { "adapter" => "mysql2", "socket" => server.fetch("MYSQL_UNIX_PORT"), "username" => "root",
                   "database" => "ruzzy" }
        assert_requests_rolled_back(config, server)
      end
    end
  end

  private

  # REQUESTS requests to APP on the database +config+ (Active Record's
  # connection settings; +env+ the server's) end without a finding, and the
  # INFO line says each ran in a transaction rolled back.
  def assert_requests_rolled_back(config, env = {})
    in_tmpdir do |dir|
      File.write(File.join(dir, "config.ru"), APP)
      result = ruzzy("rack", "config.ru", "-seed=1", "-runs=#{REQUESTS}",
                     chdir: dir, env: env.merge("DATABASE" => JSON.generate(config)))
      assert_exit 0, result
      assert_match(/^INFO: ruzzy rack: .*each request in a database transaction rolled back/, result.output)
      assert_match(/^Done #{REQUESTS} runs/, result.output)
    end
  end
end

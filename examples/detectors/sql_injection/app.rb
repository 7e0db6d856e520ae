# frozen_string_literal: true

require "sqlite3"

# A user directory in an SQLite database in memory: looks people up by name.
class Directory
  def initialize
    @db = SQLite3::Database.new(":memory:")
    @db.execute("CREATE TABLE users (name TEXT, email TEXT, admin INTEGER)")
    @db.execute("INSERT INTO users VALUES ('alice', 'alice@example.org', 1), ('bob', 'bob@example.org', 0)")
  end

  # Vulnerable: the name is pasted into the query; a quote in it ends the
  # literal (and the error a broken query raises is rescued).
  def email(name)
    @db.execute("SELECT email FROM users WHERE name = '#{name}' AND admin = 0").first&.first
  rescue SQLite3::Exception
    nil
  end

  # Safe: the name is a bound parameter.
  def email_safely(name)
    @db.execute("SELECT email FROM users WHERE name = ? AND admin = 0", [name]).first&.first
  end
end

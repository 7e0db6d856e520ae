# frozen_string_literal: true

require_relative "../error"
require_relative "report"

module Ruzzy
  module Detectors
    # SQL injection: a query the input added SQL to. Two signs, both
    # findings even when the program rescues the error: the query has the
    # canary CANARY as a bare word, outside every string literal, quoted
    # name and comment (the input broke out of a literal or wrote SQL where
    # a value was expected: `' or ruzzy or '`, `1 or ruzzy`); or the
    # database rejects the query's syntax (SQLite's "syntax error",
    # "unrecognized token", "incomplete input"; PostgreSQL's
    # PG::SyntaxError; MySQL's error 1064). Queries are seen where every library hands them to
    # the database: SQLite3::Statement.new (sqlite3's execute, query,
    # prepare and execute_batch, and Sequel's and Active Record's SQLite
    # adapters), SQLite3::Database#execute_batch2, PG::Connection's exec,
    # exec_params, query, prepare and send_ forms (pg, and the PostgreSQL
    # adapters built on it), Mysql2::Client#query and #prepare (mysql2,
    # with MySQL's backslash escapes), and Sequel's query log
    # (Sequel::Database#log_connection_yield, every adapter, the mock one
    # included). Bound parameters never appear in a query's text: nothing
    # to find.
    class SQLInjection < Report
      NAME = :sql_injection
      SUMMARY = "SQL with input outside its literals, or rejected as a syntax error (sqlite3, pg, mysql2, Sequel)"

      WORDS = QUERY_WORDS
      LANGUAGE = "SQL"
      TEXT = "query"
      INJECTED = "wrote SQL (#{CANARY} outside any literal)".freeze

      # What a query's literals, quoted names and comments look like
      # (PostgreSQL's dollar quoting, $tag$...$tag$, among them).
      QUOTED = %r{'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|\$(\w*)\$.*?\$\1\$|--[^\n]*|/\*.*?\*/}m

      # The same in MySQL, whose literals escape with backslashes
      # (Mysql2::Client#escape writes `\'`) and whose comments also start
      # with "#".
      MYSQL_QUOTED = %r{'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`[^`]*`|(?:--\s|#)[^\n]*|/\*.*?\*/}m

      # [class path, label, methods, index of the SQL argument, quoting].
      SINKS = [
        ["SQLite3::Statement", "SQLite3::Statement.", %i[initialize], 1, QUOTED],
        ["SQLite3::Database", "SQLite3::Database#", %i[execute_batch2], 0, QUOTED],
        ["PG::Connection", "PG::Connection#",
         %i[exec async_exec sync_exec exec_params async_exec_params sync_exec_params query send_query
            send_query_params], 0, QUOTED],
        ["PG::Connection", "PG::Connection#", %i[prepare async_prepare sync_prepare send_prepare], 1, QUOTED],
        ["Mysql2::Client", "Mysql2::Client#", %i[query prepare], 0, MYSQL_QUOTED],
        ["Sequel::Database", "Sequel::Database#", %i[log_connection_yield], 0, QUOTED]
      ].freeze

      # [error class path, what says the database rejected the query's
      # syntax: a message pattern, or an error number (MySQL's 1064,
      # ER_PARSE_ERROR), or nil for every error of the class (PostgreSQL's
      # SQLSTATE 42601)], whatever the message's language.
      SYNTAX_ERRORS = [["SQLite3::SQLException", /syntax error|unrecognized token|incomplete input/],
                       ["PG::SyntaxError", nil], ["Mysql2::Error", 1064]].freeze

      class << self
        def install
          SINKS.each do |path, label, methods, index, quoted|
            target = Detectors.loaded_constant(path)
            hook(target, label, methods, index, quoted) if target
          end
          @syntax_errors = SYNTAX_ERRORS.filter_map do |path, sign|
            klass = Detectors.loaded_constant(path)
            [klass, sign] if klass
          end
        end

        # Whether the input wrote SQL into +sql+ (standard quoting).
        def injected?(sql)
          Detectors.bare_canary?(sql, QUOTED)
        end

        # +error+ was raised running +sql+: a syntax error is the finding.
        # SQLite's message is binary and may quote the input's bytes, a
        # query non-ASCII UTF-8: the message is shown as text (\xNN).
        def failed(sink, sql, error)
          return unless syntax_error?(error)

          Detectors.report(new("SQL injection: the database rejected the syntax of the query #{Detectors.shown(sql)} " \
                               "(#{error.class}: #{Error.text(error.message)})", sink))
        end

        # Whether +error+ says the database could not parse a query (its
        # message may quote bytes invalid in its encoding: read as bytes).
        def syntax_error?(error)
          @syntax_errors.any? do |klass, sign|
            next false unless error.is_a?(klass)

            case sign
            when Regexp then error.message.b.match?(sign)
            when Integer then error.respond_to?(:error_number) && error.error_number == sign
            else true
            end
          end
        end

        private

        # Prepends to +target+ the hooks of +methods+, whose argument
        # +index+ is the SQL, quoted as +quoted+ matches.
        def hook(target, label, methods, index, quoted)
          hooks = Module.new
          methods.each do |name|
            next unless target.method_defined?(name) || target.private_method_defined?(name)

            sink = "#{label}#{name}".sub(/\.initialize\z/, ".new")
            hooks.define_method(name) do |*args, **options, &block|
              Detectors.check_query(SQLInjection, sink, args[index]) { |sql| Detectors.bare_canary?(sql, quoted) }
              begin
                super(*args, **options, &block)
              rescue StandardError => e
                SQLInjection.failed(sink, args[index], e)
                raise
              end
            end
            hooks.send(:private, name) if target.private_method_defined?(name)
          end
          target.prepend(hooks)
        end
      end
    end
  end
end

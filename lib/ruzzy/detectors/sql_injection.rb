# frozen_string_literal: true

module Ruzzy
  module Detectors
    # SQL injection: a query the input added SQL to. Two signs, both
    # findings even when the program rescues the error: the query has the
    # canary CANARY as a bare word, outside every string literal, quoted
    # name and comment (the input broke out of a literal or wrote SQL where
    # a value was expected: `' or ruzzy or '`, `1 or ruzzy`); or the
    # database rejects the query's syntax (SQLite's "syntax error",
    # "unrecognized token", "incomplete input"; PostgreSQL's
    # PG::SyntaxError). Queries are seen where every library hands them to
    # the database: SQLite3::Statement.new (sqlite3's execute, query,
    # prepare and execute_batch, and Sequel's and Active Record's SQLite
    # adapters), SQLite3::Database#execute_batch2, PG::Connection's exec,
    # exec_params, query, prepare and send_ forms (pg, and the PostgreSQL
    # adapters built on it), and Sequel's query log
    # (Sequel::Database#log_connection_yield, every adapter, the mock one
    # included). Bound parameters never appear in a query's text: nothing
    # to find.
    class SQLInjection < Report
      NAME = :sql_injection
      SUMMARY = "SQL with input outside its literals, or rejected as a syntax error (sqlite3, pg, Sequel)"

      WORDS = QUERY_WORDS
      LANGUAGE = "SQL"
      TEXT = "query"
      INJECTED = "wrote SQL (#{CANARY} outside any literal)".freeze

      # What a query's literals, quoted names and comments look like
      # (PostgreSQL's dollar quoting, $tag$...$tag$, among them).
      QUOTED = %r{'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|\$(\w*)\$.*?\$\1\$|--[^\n]*|/\*.*?\*/}m

      # [class path, label, methods, index of the SQL argument].
      SINKS = [
        ["SQLite3::Statement", "SQLite3::Statement.", %i[initialize], 1],
        ["SQLite3::Database", "SQLite3::Database#", %i[execute_batch2], 0],
        ["PG::Connection", "PG::Connection#",
         %i[exec async_exec sync_exec exec_params async_exec_params sync_exec_params query send_query
            send_query_params], 0],
        ["PG::Connection", "PG::Connection#", %i[prepare async_prepare sync_prepare send_prepare], 1],
        ["Sequel::Database", "Sequel::Database#", %i[log_connection_yield], 0]
      ].freeze

      # [error class path, message pattern]: the database rejected the
      # query's syntax (PostgreSQL: SQLSTATE 42601, whatever the message's
      # language).
      SYNTAX_ERRORS = [["SQLite3::SQLException", /syntax error|unrecognized token|incomplete input/],
                       ["PG::SyntaxError", //]].freeze

      class << self
        def install
          SINKS.each do |path, label, methods, index|
            target = Detectors.loaded_constant(path)
            hook(target, label, methods, index) if target
          end
          @syntax_errors = SYNTAX_ERRORS.filter_map do |path, pattern|
            klass = Detectors.loaded_constant(path)
            [klass, pattern] if klass
          end
        end

        # Whether the input wrote SQL into +sql+.
        def injected?(sql)
          Detectors.bare_canary?(sql, QUOTED)
        end

        # +error+ was raised running +sql+: a syntax error is the finding.
        def failed(sink, sql, error)
          return unless syntax_error?(error)

          Detectors.report(new("SQL injection: the database rejected the syntax of the query #{Detectors.shown(sql)} " \
                               "(#{error.class}: #{error.message})", sink))
        end

        # Whether +error+ says the database could not parse a query (its
        # message may quote bytes invalid in its encoding: read as bytes).
        def syntax_error?(error)
          @syntax_errors.any? { |klass, pattern| error.is_a?(klass) && error.message.b.match?(pattern) }
        end

        private

        # Prepends to +target+ the hooks of +methods+, whose argument
        # +index+ is the SQL.
        def hook(target, label, methods, index)
          hooks = Module.new
          methods.each do |name|
            next unless target.method_defined?(name) || target.private_method_defined?(name)

            sink = "#{label}#{name}".sub(/\.initialize\z/, ".new")
            hooks.define_method(name) do |*args, **options, &block|
              Detectors.check_query(SQLInjection, sink, args[index])
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

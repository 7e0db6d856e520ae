# frozen_string_literal: true

require_relative "../error"
require_relative "session"
require_relative "links"

module Ruzzy
  module Web
    # A response as the oracle sees it: +status+, +headers+, the +body+
    # read whole, and the +exception+ behind it (one that escaped the app,
    # or the one its error handling rendered), or nil.
    Response = Struct.new(:status, :headers, :body, :exception, keyword_init: true)

    # Raised for a server error response that has no exception behind it
    # (the app answered 500 itself): its message names the request.
    class ServerErrorResponse < StandardError; end

    # A Rack app as a fuzz target of Requests (Ruzzy.fuzz_rack): each call
    # sends one request and raises when the response is a finding.
    #
    # A finding is a response whose status is in +statuses+ (5xx by
    # default), or that +oracle+ (called with the Request and the Response)
    # says is one. An exception that escapes the app counts as the status
    # the framework would answer with (Rails' rescue_responses: a
    # RoutingError is a 404, a ParameterMissing a 400; an exception with
    # #http_status, as Sinatra's have), 500 for any other. The finding is
    # the app's own exception when there is one (escaped, or kept in
    # env["sinatra.error"] / env["action_dispatch.exception"]), so it has
    # the app's backtrace; else, or when the app's error page for a client
    # error failed, a ServerErrorResponse.
    #
    # Invariant: when Active Record has a connection, every request runs in
    # a transaction rolled back afterwards (as Rails' transactional tests
    # do), the body read included, so inputs stay independent.
    class RackTarget
      # Where frameworks keep the exception their error handling rendered.
      EXCEPTION_KEYS = %w[sinatra.error action_dispatch.exception].freeze
      # Where a raised finding keeps the requests that raised it.
      SENT = :@__ruzzy_web_requests_sent

      def initialize(app, statuses: 500..599, oracle: nil)
        raise InvalidTargetError, "the app must be a Rack app (respond to #call), got #{app.inspect}" \
          unless app.respond_to?(:call)
        unless statuses.respond_to?(:include?)
          raise InvalidArgumentsError, "statuses: takes a Range or Array of status codes, got #{statuses.inspect}"
        end
        raise InvalidArgumentsError, "oracle: must respond to #call, got #{oracle.inspect}" \
          unless oracle.nil? || oracle.respond_to?(:call)

        @app = app
        @statuses = statuses
        @oracle = oracle
        @base_env = nil
        @links = Links.new
      end

      # The requests, as sent, of the call that raised +error+ (a session's
      # with what earlier responses gave them), or nil. They are kept on the
      # exception itself, so they live as long as it does.
      def sent_for(error)
        error.instance_variable_get(SENT) if error.is_a?(Exception) && error.instance_variable_defined?(SENT)
      end

      # Sends +request+, or each request of an Array (a session: what each
      # response gives is carried to the next request, see SessionState);
      # raises the first finding, if any. Returns nil.
      def call(request)
        session = request.is_a?(Array)
        state = SessionState.new if session
        sent = []
        rolled_back do
          (session ? request : [request]).each do |one|
            one = state.prepare(one) if session
            sent << one
            @links.guide(one)
            response = respond(one.to_env(@base_env ||= Web.base_env))
            raise_finding(one, response) if finding?(one, response)
            @links.learn(response)
            state&.learn(response)
          end
        end
        nil
      rescue Exception => e # rubocop:disable Lint/RescueException -- a detector's report is an Exception
        e.instance_variable_set(SENT, sent) unless e.frozen? || e.instance_variable_defined?(SENT)
        raise
      end

      private

      def respond(env)
        status, headers, body = @app.call(env)
        text = read(body)
        rendered = EXCEPTION_KEYS.filter_map { |key| env[key] }.first
        Response.new(status: status.to_i, headers:, body: text, exception: rendered)
      rescue StandardError, ScriptError, SystemStackError => e
        Response.new(status: status_for(e), headers: {}, body: "", exception: e)
      end

      # The body read whole (a file's body opens the file here), closed.
      def read(body)
        text = +""
        body.each { |chunk| text << chunk.to_s }
        text
      ensure
        body.close if body.respond_to?(:close)
      end

      def finding?(request, response)
        return !!@oracle.call(request, response) if @oracle

        @statuses.include?(response.status)
      end

      def raise_finding(request, response)
        error = response.exception
        answered = "#{request.verb} #{request.path} answered #{response.status}"
        raise ServerErrorResponse, answered unless error.is_a?(Exception)
        raise error unless response.status >= 500 && (status = status_for(error)) < 500

        # The app's error page for a client error failed (Rails prints
        # "Error during failsafe response"): the exception is not the bug.
        raise ServerErrorResponse, "#{answered} while rendering the error page of #{error.class} (a #{status}): " \
                                   "the error handling itself failed"
      end

      # The status a framework answers an escaped exception with.
      def status_for(error)
        return error.http_status.to_i if error.respond_to?(:http_status)
        return 500 unless defined?(::ActionDispatch::ExceptionWrapper)

        ::ActionDispatch::ExceptionWrapper.status_code_for_exception(error.class.name).to_i
      rescue StandardError
        500
      end

      # Runs the block in a transaction rolled back afterwards, when Active
      # Record is connected.
      def rolled_back
        connection = active_record_connection
        return yield unless connection

        connection.begin_transaction(joinable: false, _lazy: false)
        begin
          yield
        ensure
          connection.rollback_transaction if connection.transaction_open?
        end
      end

      def active_record_connection
        return unless defined?(::ActiveRecord::Base)

        base = ::ActiveRecord::Base
        base.respond_to?(:lease_connection) ? base.lease_connection : base.connection
      rescue StandardError
        nil
      end
    end
  end
end

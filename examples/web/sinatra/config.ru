# frozen_string_literal: true

# rackup examples/web/sinatra/config.ru                          the vulnerable app
# RUZZY_EXAMPLE_FIXED=1 rackup examples/web/sinatra/config.ru    the fixed one
# ruzzy rack examples/web/sinatra/config.ru -max_total_time=60   fuzzing it (README.md)
require_relative "app"

# Rack 2.2 (Debian 12's ruby-rack) raises NoMethodError on a request whose
# X-Forwarded-Host header names no host (empty, or only commas and blanks):
# Rack::Request#forwarded_authority takes the first of none. It was ruzzy's
# first finding on this app, in under 100 requests; Rack 3 checks for it.
# Such a header is dropped here, as if it had not been sent.
class BlankForwardedHost
  def initialize(app)
    @app = app
  end

  def call(env)
    hosts = env["HTTP_X_FORWARDED_HOST"]&.strip&.split(/[,\s]+/) # as Rack reads it
    env.delete("HTTP_X_FORWARDED_HOST") if hosts&.empty?
    @app.call(env)
  end
end

use BlankForwardedHost
run NotesApp

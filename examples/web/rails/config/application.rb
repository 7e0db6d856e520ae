# frozen_string_literal: true

# A small task tracker's JSON API: projects, their members and tasks, file
# attachments, exports and a board whose layout a cookie remembers.
#
# Only what the app uses is loaded: Active Record and Action Controller (no
# views, mailers, jobs or assets). It runs from Debian's Rails packages
# (ruby-railties, ruby-actionpack, ruby-activerecord, ruby-sqlite3) with
# plain `require`: no Gemfile, no Bundler.
require "rails"
require "active_record/railtie"
require "action_controller/railtie"

# The planted bugs run no command and write no file: every process-starting
# call is a stand-in (the bug detectors hook in front of it and still see
# each call).
require_relative "../../../detectors/sandbox"
require_relative "../lib/header_check"

# The application.
module TaskTracker
  # RUZZY_EXAMPLE_FIXED=1 serves the same routes with every planted bug
  # fixed.
  def self.fixed?
    ENV["RUZZY_EXAMPLE_FIXED"] == "1"
  end

  # Its configuration, for every environment (config/environments/test.rb
  # adds the test environment's).
  class Application < Rails::Application
    config.load_defaults 6.1
    config.api_only = true
    config.root = File.expand_path("..", __dir__)

    # Everything under app/ is loaded at boot, before the first request.
    config.eager_load = true

    # Nothing is written: no log/ (the log goes nowhere), no tmp/ (a fixed
    # secret instead of tmp/development_secret.txt or tmp/local_secret.txt).
    config.logger = ActiveSupport::Logger.new(nil)
    config.log_level = :fatal
    config.secret_key_base = "ruzzy-example-not-a-secret"

    # Fixed: header values with control characters are refused before Rails
    # reads them (a bug of Rails itself, lib/header_check.rb).
    config.middleware.insert_before 0, HeaderCheck if TaskTracker.fixed?
  end
end

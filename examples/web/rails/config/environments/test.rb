# frozen_string_literal: true

# The environment ruzzy runs the app in (RAILS_ENV=test unless set).
Rails.application.configure do
  config.cache_classes = true
  config.action_controller.perform_caching = false

  # Errors are rendered as in production: ActionController::ParameterMissing
  # is a 400, ActiveRecord::RecordNotFound a 404, RecordInvalid a 422, and
  # any other exception a 500 whose exception is in
  # env["action_dispatch.exception"]. Rails 7.1 and later take a Symbol,
  # Rails 6.1 and 7.0 a boolean (Rails 7.2 reads `false` as :all).
  config.action_dispatch.show_exceptions = Rails.gem_version >= Gem::Version.new("7.1") ? :all : true
  # No debugging page: Rails' (6.1 and 7.2 alike) renders the error itself
  # and leaves env["action_dispatch.exception"] unset.
  config.consider_all_requests_local = false

  config.active_support.deprecation = :stderr
end

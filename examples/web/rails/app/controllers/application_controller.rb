# frozen_string_literal: true

# What every controller shares: the project of the route, and parameters
# checked for their type. Outside the planted bugs the app is written
# defensively, so that each planted bug is the only finding of its action.
class ApplicationController < ActionController::API
  private

  # The project of the route's :project_id (a 404 when there is none).
  def project
    @project ||= Project.find(params[:project_id])
  end

  # params[key] when it is a JSON object, else a 400. (params.require
  # returns a String or an Array as it is, and calling `permit` on it would
  # be a NoMethodError; Rails 8's params.expect checks this.)
  def object_param(key, from: params)
    value = from.require(key)
    return value if value.is_a?(ActionController::Parameters)

    raise ActionController::BadRequest, "#{key} must be an object"
  end

  # params[key] when it is a String, else a 400.
  def string_param(key, from: params)
    value = from.require(key)
    return value if value.is_a?(String)

    raise ActionController::BadRequest, "#{key} must be a string"
  end
end

# frozen_string_literal: true

# GET /projects/:project_id/members?name=NAME: a project's members, or those
# called NAME.
class MembersController < ApplicationController
  def index
    members = project.members.order(:id)
    members = members.where(named(params[:name])) if params.key?(:name)
    render json: members
  end

  private

  def named(name)
    # Fixed: the name is a bound value, never SQL.
    return { name: string_param(:name) } if TaskTracker.fixed?

    # Planted: SQL injection. The name is pasted into the SQL, so a quote in
    # it ends the string literal and what follows is SQL.
    "name = '#{name}'"
  end
end

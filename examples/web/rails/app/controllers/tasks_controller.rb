# frozen_string_literal: true

# GET /projects/:project_id/tasks, and
# POST /projects/:project_id/tasks {"task": {"title": T, "assignee": {"email": E}}}:
# a new task, assigned to the member whose email is E, if any.
class TasksController < ApplicationController
  def index
    render json: project.tasks.order(:id)
  end

  def create
    attributes = object_param(:task).permit(:title, assignee: [:email])
    assignee = project.members.find_by(email: assignee_email(attributes))
    task = project.tasks.create!(title: attributes[:title], assignee:)
    render json: task, status: :created
  end

  private

  def assignee_email(attributes)
    # Fixed: the assignee is optional, and an object when given.
    if TaskTracker.fixed?
      assignee = attributes[:assignee]
      return assignee.is_a?(ActionController::Parameters) ? assignee[:email] : nil
    end

    # Planted: "assignee" is optional, but read as if it were always there:
    # a task without one is nil[:email], a NoMethodError (a 500).
    attributes[:assignee][:email]
  end
end

# frozen_string_literal: true

# GET /projects, GET /projects/:id
class ProjectsController < ApplicationController
  def index
    render json: Project.order(:id)
  end

  def show
    render json: Project.find(params[:id])
  end
end

# frozen_string_literal: true

require "yaml"

# GET /projects/:project_id/board: the project's tasks, laid out as the
# cookie "board" says (YAML, such as "{columns: [todo, done], compact: true}";
# the client saves it).
class BoardsController < ApplicationController
  DEFAULT_LAYOUT = { "columns" => %w[todo done], "compact" => false }.freeze

  def show
    render json: { project: project.name, layout:, tasks: project.tasks.order(:id) }
  end

  private

  def layout
    text = request.cookies["board"]
    return DEFAULT_LAYOUT unless text

    saved = load_layout(text)
    saved.is_a?(Hash) ? DEFAULT_LAYOUT.merge(saved) : DEFAULT_LAYOUT
  end

  def load_layout(text)
    # Fixed: plain data only. safe_load raises Psych::DisallowedClass for
    # anything else, Psych::SyntaxError for bad YAML, and ArgumentError for
    # a value its tag cannot read ("!!float x").
    if TaskTracker.fixed?
      begin
        return YAML.safe_load(text)
      rescue Psych::Exception, ArgumentError
        return nil
      end
    end

    # Planted: unsafe deserialization. unsafe_load builds an object of any
    # class the cookie names (`!ruby/object:ClassName`).
    begin
      YAML.unsafe_load(text)
    rescue Psych::SyntaxError
      nil
    end
  end
end

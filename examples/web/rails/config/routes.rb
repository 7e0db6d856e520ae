# frozen_string_literal: true

# Every route the app has; `ruzzy rack` reads them (and fills in :project_id).
Rails.application.routes.draw do
  resources :projects, only: %i[index show] do
    # GET ?name=...: the members called so. Planted: SQL injection.
    resources :members, only: %i[index]
    # POST {"task": {"title": ..., "assignee": {"email": ...}}}. Planted: a
    # task without an assignee is a NoMethodError (500).
    resources :tasks, only: %i[index create]
    # GET ?file=...: one of the project's attachments. Planted: path traversal.
    get "attachment", to: "attachments#show"
    # POST {"export": {"name": ...}}: an archive of the attachments. Planted:
    # command injection.
    post "exports", to: "exports#create"
    # GET, with the cookie "board": the task board. Planted: unsafe YAML.
    get "board", to: "boards#show"
  end
end

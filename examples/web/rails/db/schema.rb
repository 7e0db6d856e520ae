# frozen_string_literal: true

# The tables, created in the in-memory database at boot.
ActiveRecord::Schema.define(version: 1) do
  create_table :projects, force: true do |t|
    t.string :name, null: false
  end

  create_table :members, force: true do |t|
    t.references :project, null: false
    t.string :name, null: false
    t.string :email, null: false
  end

  create_table :tasks, force: true do |t|
    t.references :project, null: false
    t.references :assignee
    t.string :title, null: false
    t.boolean :done, null: false, default: false
  end
end

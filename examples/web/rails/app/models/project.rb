# frozen_string_literal: true

# A project: its members work on its tasks.
class Project < ApplicationRecord
  has_many :members, dependent: :destroy
  has_many :tasks, dependent: :destroy
end

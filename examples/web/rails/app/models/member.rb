# frozen_string_literal: true

# Someone working on a project.
class Member < ApplicationRecord
  belongs_to :project
  has_many :tasks, foreign_key: :assignee_id, inverse_of: :assignee, dependent: :nullify

  validates :name, :email, presence: true
end

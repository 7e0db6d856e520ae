# frozen_string_literal: true

# A thing to do in a project, maybe assigned to one of its members.
class Task < ApplicationRecord
  belongs_to :project
  belongs_to :assignee, class_name: "Member", optional: true

  validates :title, presence: true, length: { maximum: 200 }
end

# frozen_string_literal: true

# The app's models' base class.
class ApplicationRecord < ActiveRecord::Base
  self.abstract_class = true
end

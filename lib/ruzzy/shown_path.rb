# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # How ruzzy names a file to a person: relative to a directory (the
  # current one unless told) when the file is inside it, else as given.
  module ShownPath
    module_function

    def of(path, root = Dir.pwd)
      prefix = root.end_with?("/") ? root : "#{root}/"
      path.start_with?(prefix) ? path.delete_prefix(prefix) : path
    end
  end
end

# frozen_string_literal: true

require "rbconfig"
require_relative "own_files"

module Ruzzy
  # The user's code, as reports show it: files outside ruzzy, installed
  # gems and Ruby's own library (`ruzzy cov`'s default, a campaign's status
  # line).
  module UserCode
    module_function

    # Where installed gems and Ruby's own library live.
    def library_dirs
      config = RbConfig::CONFIG
      gems = Gem.path.map { |dir| "#{File.expand_path(dir)}/" }
      ruby = config.values_at("rubylibprefix", "sitedir", "vendordir").compact.reject(&:empty?)
      (gems + ruby.map { |dir| "#{dir}/" } + ["<internal:"]).uniq
    end

    # Whether +path+ is the user's code.
    def include?(path)
      !path.start_with?(OWN_FILES, *(@library_dirs ||= library_dirs))
    end
  end
end

# frozen_string_literal: true

require "tmpdir"

# POST /projects/:project_id/exports {"export": {"name": NAME}}: packs the
# attachments into NAME.tar.gz. (config/application.rb loads the examples'
# sandbox: tar never runs, nothing is written.)
class ExportsController < ApplicationController
  ROOT = AttachmentsController::ROOT
  NAME = /\A[\w-]{1,64}\z/

  def create
    name = string_param(:name, from: object_param(:export))
    archive = File.join(Dir.tmpdir, "project-#{project.id}-#{name}.tar.gz")
    if TaskTracker.fixed?
      # Fixed: a plain name, and tar's arguments as a list: no shell reads them.
      return head(:unprocessable_entity) unless name.match?(NAME)

      system("tar", "-czf", archive, "-C", ROOT, ".")
    else
      # Planted: command injection. The name is part of a shell command
      # line: "x;cmd", "$(cmd)" run cmd.
      system("tar -czf #{archive} -C #{ROOT} .")
    end
    render json: { archive: File.basename(archive) }, status: :created
  end
end

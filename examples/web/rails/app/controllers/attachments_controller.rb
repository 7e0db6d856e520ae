# frozen_string_literal: true

# GET /projects/:project_id/attachment?file=NAME: one of the files in
# storage/attachments.
class AttachmentsController < ApplicationController
  ROOT = Rails.root.join("storage", "attachments").to_s
  # Fixed: the names a client may ask for.
  NAMES = Dir.children(ROOT).sort.freeze

  def show
    project
    name = string_param(:file)
    # Fixed: only the attachments there are; nothing else is a path.
    return head(:not_found) if TaskTracker.fixed? && !NAMES.include?(name)

    # Planted: path traversal. "../" in the name walks out of ROOT, and
    # send_file serves any file the process can read.
    path = File.join(ROOT, name)
    return head(:not_found) unless File.file?(path)

    send_file path, type: "text/plain", disposition: "inline"
  end
end

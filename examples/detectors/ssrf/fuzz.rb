# frozen_string_literal: true

# ruzzy examples/detectors/ssrf/fuzz.rb
# Finds the server-side request forgery in LinkPreview#title (detector
# ssrf): the input chooses the host it connects to. The finding is reported
# before the connection is made; no request leaves the machine.
require_relative "../sandbox"
require_relative "app"
require "ruzzy"

preview = LinkPreview.new(PageServer.new.origin)

Ruzzy.fuzz(lambda { |data|
  preview.title(data)
  nil
})

# frozen_string_literal: true

# ruzzy examples/detectors/ssrf/fuzz_safe.rb
# LinkPreview#title_of_page only ever fetches from the one site, which the
# harness allows: nothing to find.
require_relative "../sandbox"
require_relative "app"
require "ruzzy"

site = PageServer.new
Ruzzy::Detectors.allow_network(host: "127.0.0.1", port: site.port)
preview = LinkPreview.new(site.origin)

Ruzzy.fuzz(lambda { |data|
  preview.title_of_page(data)
  nil
})

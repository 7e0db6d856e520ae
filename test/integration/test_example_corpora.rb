# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/minitest"
require_relative "../../examples/lib/hello"

# The examples' saved corpora, replayed as ordinary tests through ruzzy's own
# Minitest integration (one test per file in fuzz/<name>/ beside this file).
class TestExampleCorpora < Minitest::Test
  fuzz_test "hello parser" do |data|
    assert_includes %i[empty no_magic no_version ok], Hello.parse(data)
  end
end

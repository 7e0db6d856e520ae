# frozen_string_literal: true

require_relative "../test_helper"

# examples/web/rails, fuzzed as its README says: the app with its bugs
# fixed (RUZZY_EXAMPLE_FIXED=1) gives no finding from an empty corpus. The
# app is a Rails app of Debian's packages (Rails 6.1 on Debian 12, 7.2 in
# the chroots): without Rails these tests fail, they are not skipped.
class TestWebRailsSearch < Minitest::Test
  APP = File.join(RuzzyTestHelper::EXAMPLES, "web", "rails")

  # Requests the fixed app is sent.
  FIXED_RUNS = 4_000

  def setup
    requires = %w[rails active_record/railtie action_controller/railtie sqlite3].map { |lib| "require '#{lib}'" }
    loaded = ruby("-e", requires.join("; "))
    assert loaded.status.success?,
           "examples/web/rails needs Rails with Active Record and sqlite3 (apt-get install ruby-railties " \
           "ruby-actionpack ruby-activerecord ruby-sqlite3; bin/setup installs them):\n#{loaded.stderr}"
  end

  def test_the_fixed_app_has_nothing_to_find
    routes = %r{^INFO: ruzzy rack: 8 routes: .*POST /projects/:project_id/tasks.*; each request in a database }
    assert_fixed_example_silent(APP, FIXED_RUNS, routes)
  end
end

# frozen_string_literal: true

# Boots the application: its configuration, then the database, which lives
# in memory and is created afresh (tables, then rows) by every process.
require_relative "application"

Rails.application.initialize!

ActiveRecord::Schema.verbose = false
load Rails.root.join("db/schema.rb").to_s
load Rails.root.join("db/seeds.rb").to_s
# The database is the pool's one connection (config/database.yml): back
# into the pool with it, for the thread a server runs a request in.
ActiveRecord::Base.connection_pool.release_connection

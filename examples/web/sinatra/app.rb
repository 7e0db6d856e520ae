# frozen_string_literal: true

require "sinatra/base"
require "json"
require "yaml"
require "sqlite3"
# Nothing here ever starts a process: `...`, system and IO.popen only say
# what would have run (the bug detectors still see every call).
require_relative "../../detectors/sandbox"

# A small project-notes service: projects with notes, a search, attached
# files, an export through pandoc and display preferences kept in a cookie.
#
# Five bugs are planted in it, one per route, each with its fix beside it:
# the app runs the vulnerable code unless RUZZY_EXAMPLE_FIXED=1 is set when
# it loads (settings.fixed?). The fixed app answers every request with 2xx,
# 400 or 404.
#
# It is harmless to fuzz: the database is in memory, files are only read,
# and no command runs (../../detectors/sandbox.rb).
class NotesApp < Sinatra::Base
  set :root, __dir__
  set :files, File.join(__dir__, "files")
  set :fixed, ENV.fetch("RUZZY_EXAMPLE_FIXED", "0") == "1"

  # The notes a project keeps (older ones are dropped): the database stays
  # small however many notes are posted.
  NOTES_KEPT = 20
  # The preferences a reader may set, and their defaults.
  THEMES = %w[light dark].freeze
  DEFAULT_PREFERENCES = { "theme" => "light", "page_size" => 10 }.freeze

  DB = SQLite3::Database.new(":memory:")
  DB.results_as_hash = true
  DB.execute_batch(<<~SQL)
    CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE notes (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT);
    INSERT INTO projects (id, name) VALUES (1, 'website'), (2, 'mobile app');
    INSERT INTO notes (project_id, title, body) VALUES
      (1, 'Kick-off', 'Goals for the first quarter'),
      (1, 'Launch checklist', 'DNS, TLS, monitoring'),
      (2, 'Release plan', 'Beta in May');
  SQL

  get "/" do
    json projects: DB.execute("SELECT id, name FROM projects ORDER BY id")
  end

  get "/projects/:id" do
    notes = DB.execute("SELECT id, title FROM notes WHERE project_id = ? ORDER BY id", [project["id"]])
    json project.merge("notes" => notes)
  end

  # Adds a note: {"note": {"title": "...", "body": "..."}}.
  post "/projects/:id/notes" do
    note = json_body["note"]
    # Bug 1, a missing parameter is a 500: without "note", or a "note" without
    # a "title", note["title"] is nil (NoMethodError). Fixed: checked, a 400.
    valid = note.is_a?(Hash) && text?(note["title"])
    halt 400, json(error: "note.title is required") if settings.fixed? && !valid
    title = note["title"].strip
    DB.execute("INSERT INTO notes (project_id, title, body) VALUES (?, ?, ?)",
               [project["id"], title, note["body"].to_s])
    id = DB.last_insert_row_id
    DB.execute("DELETE FROM notes WHERE project_id = ? AND id <= ?", [project["id"], id - NOTES_KEPT])
    status 201
    json id:, title:
  end

  # Finds the notes whose title has the words: {"query": "launch"}.
  post "/projects/:id/search" do
    query = json_body["query"]
    notes = if settings.fixed?
              # Fixed: the query is a bound parameter, data whatever it says.
              halt 400, json(error: "query must be text") unless query.nil? || text?(query)
              DB.execute("SELECT id, title FROM notes WHERE project_id = ? AND title LIKE ?",
                         [project["id"], "%#{query}%"])
            else
              # Bug 2, SQL injection: the query is pasted into the SQL; a quote
              # ends the literal.
              DB.execute("SELECT id, title FROM notes WHERE project_id = #{project["id"]} " \
                         "AND title LIKE '%#{query}%'")
            end
    json notes:
  end

  # Sends an attached file: ?name=kickoff.md.
  get "/projects/:id/files" do
    project
    name = params[:name]
    halt 400, json(error: "name is required") unless name.is_a?(String)
    # Fixed: only a file of the folder, by its name. (File.basename alone is
    # not enough: "", "." and ".." are directories.)
    halt 404, json(error: "no such file") if settings.fixed? && !Dir.children(settings.files).include?(name)
    # Bug 3, path traversal: unless fixed, "../" in the name walks out of the
    # folder.
    send_file File.join(settings.files, name)
  end

  # Converts the project's brief to another format: {"format": "html"}.
  post "/projects/:id/export" do
    name = project["name"]
    brief = File.join(settings.files, "kickoff.md")
    format = json_body.fetch("format", "html")
    document = if settings.fixed?
                 # Fixed: each argument its own word; no shell reads the format.
                 IO.popen(["pandoc", "--from=markdown", "--to=#{format}", brief], &:read)
               else
                 # Bug 4, command injection: the format is part of a shell
                 # command line, so "html;cmd" runs cmd.
                 `pandoc --from=markdown --to=#{format} #{brief}`
               end
    json project: name, format: format.to_s, document: document.to_s
  end

  # The reader's display preferences, kept in the "prefs" cookie.
  get "/preferences" do
    cookie = request.cookies["prefs"]
    stored = if cookie.nil? then nil
             elsif settings.fixed?
               # Fixed: the cookie is data (JSON), whatever it says.
               begin
                 JSON.parse(cookie)
               rescue JSON::ParserError
                 nil
               end
             else
               # Bug 5, unsafe deserialization: YAML.unsafe_load builds any
               # object the cookie names (!ruby/object:...). A cookie the app
               # cannot read means the defaults.
               begin
                 YAML.unsafe_load(cookie)
               rescue StandardError
                 nil
               end
             end
    json preferences_from(stored)
  end

  private

  def json(value)
    content_type :json
    JSON.generate(value)
  end

  # The project of the path's :id, or a 404.
  def project
    @project ||= DB.get_first_row("SELECT id, name FROM projects WHERE id = ?", [params[:id].to_i]) ||
                 halt(404, json(error: "no such project"))
  end

  # The request's body, a JSON object, or a 400.
  def json_body
    @json_body ||= begin
      input = request.body # (Rack 3: nil without a body, maybe not rewindable)
      input.rewind if input.respond_to?(:rewind)
      text = String.new(input&.read.to_s, encoding: Encoding::UTF_8)
      object = JSON.parse(text) if text.valid_encoding?
      object.is_a?(Hash) ? object : halt(400, json(error: "the body must be a JSON object"))
    rescue JSON::ParserError
      halt 400, json(error: "the body is not JSON")
    end
  end

  # Whether +value+ is text a note can hold.
  def text?(value)
    value.is_a?(String) && value.valid_encoding? && !value.strip.empty?
  end

  # The known preferences of +stored+ (anything a cookie held), checked.
  def preferences_from(stored)
    return DEFAULT_PREFERENCES unless stored.is_a?(Hash)

    theme = THEMES.include?(stored["theme"]) ? stored["theme"] : DEFAULT_PREFERENCES["theme"]
    size = stored["page_size"]
    size = DEFAULT_PREFERENCES["page_size"] unless size.is_a?(Integer) && size.between?(1, 100)
    { "theme" => theme, "page_size" => size }
  end
end

# frozen_string_literal: true

require "tmpdir"

# Serves the files of a public directory by name, as a static file handler
# does. It only ever reads.
module Assets
  ROOT = File.join(Dir.tmpdir, "ruzzy-example-assets")
  Dir.mkdir(ROOT) unless File.directory?(ROOT)
  File.write(File.join(ROOT, "index.html"), "<h1>hello</h1>\n") unless File.exist?(File.join(ROOT, "index.html"))

  # Vulnerable: "../" in the name walks out of ROOT.
  def self.read(name)
    File.read(File.join(ROOT, name))
  rescue SystemCallError, ArgumentError, IOError
    nil
  end

  # Safe: only the last component of the name is used.
  def self.read_safely(name)
    File.read(File.join(ROOT, File.basename(name)))
  rescue SystemCallError, ArgumentError, IOError
    nil
  end
end

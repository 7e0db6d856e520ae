# frozen_string_literal: true

require "fileutils"
require "tmpdir"

# A PostgreSQL server of a test's own, for the detectors' PostgreSQL tests:
# a new cluster (initdb, trust authentication) in a directory of its own,
# listening on a UNIX socket there and on no TCP port, run as the postgres
# user (PostgreSQL refuses to run as root), stopped at the end of the block.
# Debian's postgresql package provides the binaries and the user.
module PostgresServer
  # The newest installed server's binaries.
  BIN = Dir["/usr/lib/postgresql/*/bin"].max_by { |dir| dir[%r{/(\d+)/bin\z}, 1].to_i }

  module_function

  # Whether a server can be started here: binaries, the postgres user, root
  # to become it.
  def available?
    !BIN.nil? && Process.uid.zero? && system("id", "postgres", out: File::NULL, err: File::NULL)
  end

  # Starts a server, yields the environment that points libpq at it
  # (PGHOST, PGUSER, PGDATABASE), stops it.
  def run
    Dir.mktmpdir("ruzzy-postgres") do |dir|
      File.chmod(0o755, dir)
      FileUtils.chown("postgres", nil, dir)
      data = File.join(dir, "data")
      as_postgres("initdb", "-D", data, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C")
      as_postgres("pg_ctl", "-D", data, "-l", File.join(dir, "log"), "-w",
                  "-o", "-k #{dir} -c listen_addresses= -c fsync=off", "start")
      begin
        yield({ "PGHOST" => dir, "PGUSER" => "postgres", "PGDATABASE" => "postgres" })
      ensure
        as_postgres("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
      end
    end
  end

  def as_postgres(program, *args)
    out, status = Open3.capture2e("runuser", "-u", "postgres", "--", File.join(BIN, program), *args)
    raise "#{program} failed:\n#{out}" unless status.success?
  end
end

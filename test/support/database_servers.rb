# frozen_string_literal: true

require "fileutils"
require "open3"
require "tmpdir"

# Database servers of a test's own, for the detectors' SQL tests: a new,
# empty instance in a directory of its own, listening on a UNIX socket there
# and on no TCP port, run as the server's system user (neither runs as
# root), stopped at the end of the block. Debian's postgresql and
# mariadb-server packages provide the binaries and the users.
module DatabaseServers
  module_function

  # Whether servers can be started here: root, to become their users.
  def root?
    Process.uid.zero?
  end

  # Whether the system user +user+ exists.
  def user?(user)
    system("id", user, out: File::NULL, err: File::NULL)
  end

  # Yields a new directory that +user+ owns and everyone can enter (the
  # server's socket is there), removed afterwards.
  def directory(user, &)
    Dir.mktmpdir("ruzzy-#{user}") do |dir|
      File.chmod(0o755, dir)
      FileUtils.chown(user, nil, dir)
      yield dir
    end
  end

  # Runs +command+ as +user+; raises with its output if it fails.
  def run_as(user, *command)
    out, status = Open3.capture2e("runuser", "-u", user, "--", *command)
    raise "#{command.first} failed:\n#{out}" unless status.success?
  end

  # PostgreSQL (initdb, trust authentication); yields the environment that
  # points libpq at it (PGHOST, PGUSER, PGDATABASE).
  module Postgres
    # The newest installed server's binaries.
    BIN = Dir["/usr/lib/postgresql/*/bin"].max_by { |dir| dir[%r{/(\d+)/bin\z}, 1].to_i }

    module_function

    def available?
      !BIN.nil? && DatabaseServers.root? && DatabaseServers.user?("postgres")
    end

    def run
      DatabaseServers.directory("postgres") do |dir|
        data = File.join(dir, "data")
        pg("initdb", "-D", data, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C")
        pg("pg_ctl", "-D", data, "-l", File.join(dir, "log"), "-w",
           "-o", "-k #{dir} -c listen_addresses= -c fsync=off", "start")
        begin
          yield({ "PGHOST" => dir, "PGUSER" => "postgres", "PGDATABASE" => "postgres" })
        ensure
          pg("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        end
      end
    end

    def pg(program, *args)
      DatabaseServers.run_as("postgres", File.join(BIN, program), *args)
    end
  end

  # MariaDB (mariadb-install-db, root without a password); yields the
  # environment naming its socket (MYSQL_UNIX_PORT, which libmysqlclient
  # and mysql2 read).
  module MariaDB
    SERVER = "/usr/sbin/mariadbd"
    INSTALL = "/usr/bin/mariadb-install-db"

    module_function

    def available?
      File.executable?(SERVER) && File.executable?(INSTALL) && DatabaseServers.root? && DatabaseServers.user?("mysql")
    end

    def run
      DatabaseServers.directory("mysql") do |dir|
        data = File.join(dir, "data")
        socket = File.join(dir, "socket")
        DatabaseServers.run_as("mysql", INSTALL, "--no-defaults", "--datadir=#{data}", "--skip-test-db",
                               "--auth-root-authentication-method=normal")
        # Started as root, the server becomes the mysql user itself.
        pid = Process.spawn(SERVER, "--no-defaults", "--user=mysql", "--datadir=#{data}", "--socket=#{socket}",
                            "--skip-networking", "--log-error=#{File.join(dir, "log")}",
                            out: File::NULL, err: File::NULL)
        begin
          wait_for(socket, pid, dir)
          yield({ "MYSQL_UNIX_PORT" => socket })
        ensure
          stop(pid)
        end
      end
    end

    def stop(pid)
      Process.kill("TERM", pid)
      Process.wait(pid)
    rescue Errno::ESRCH, Errno::ECHILD # it had exited
      nil
    end

    # Waits up to 60 s for the server's socket.
    def wait_for(socket, pid, dir)
      600.times do
        return if File.socket?(socket)
        raise "mariadbd exited:\n#{File.read(File.join(dir, "log"))}" if Process.wait(pid, Process::WNOHANG)

        sleep 0.1
      end
      raise "mariadbd did not open #{socket} in 60 s"
    end
  end
end

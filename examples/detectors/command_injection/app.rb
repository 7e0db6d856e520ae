# frozen_string_literal: true

# A network tool behind a web form: pings the host the user typed.
module NetTools
  # Looks like a host name, an IPv4 address, or a list of them.
  HOST = /\A[\w.\-;&| ]{1,64}\z/

  # Vulnerable: the host goes into a shell command line, so "x;cmd" runs
  # cmd.
  def self.ping(host)
    return false unless host.match?(HOST)

    system("ping -c 1 #{host}")
  end

  # Safe: the host is one argument of ping; no shell reads it.
  def self.ping_safely(host)
    return false unless host.match?(HOST)

    system("ping", "-c", "1", host)
  end
end

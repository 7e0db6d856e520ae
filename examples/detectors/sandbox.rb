# frozen_string_literal: true

# Keeps the vulnerable example apps harmless, with or without ruzzy's bug
# detectors: nothing here ever starts a process. Kernel#system, spawn,
# exec, ` and open("|..."), IO.popen and Process.spawn are replaced by
# stand-ins that only say what would have run. (The detectors hook the
# same methods when fuzzing starts, in front of these stand-ins, so they
# still see every call.) The apps write no files at all. Network
# connections anywhere but 127.0.0.1 (TCPSocket.new, Socket.tcp) are
# refused the same way.
module Sandbox
  # What a blocked call returns: no process ran.
  def self.blocked(_call, *_args)
    nil
  end

  # Instance and module-function forms of Kernel's process starters.
  module KernelCalls
    private

    def system(*args, **) = Sandbox.blocked(:system, *args)
    def spawn(*args, **) = Sandbox.blocked(:spawn, *args)
    def exec(*args, **) = Sandbox.blocked(:exec, *args)
    def `(command) = Sandbox.blocked(:`, command).to_s

    def open(path, *args, **, &)
      return Sandbox.blocked(:open, path) if path.is_a?(String) && path.start_with?("|")

      super
    end
  end

  # IO.popen and Process.spawn.
  module ClassCalls
    def popen(*args, **) = Sandbox.blocked(:popen, *args)
    def spawn(*args, **) = Sandbox.blocked(:spawn, *args)
  end

  # TCPSocket.new/open and Socket.tcp to anything but 127.0.0.1.
  module NetworkCalls
    def self.check(host)
      raise Errno::ECONNREFUSED, "#{host} (sandbox: only 127.0.0.1)" unless host.to_s == "127.0.0.1"
    end

    # TCPSocket#initialize.
    module Instance
      def initialize(host, *, **)
        NetworkCalls.check(host)
        super
      end
    end

    # Socket.tcp.
    module Class
      def tcp(host, *, **, &)
        NetworkCalls.check(host)
        super
      end
    end
  end

  require "socket"
  TCPSocket.prepend(NetworkCalls::Instance)
  Socket.singleton_class.prepend(NetworkCalls::Class)
  Kernel.prepend(KernelCalls)
  Kernel.singleton_class.prepend(KernelCalls)
  IO.singleton_class.prepend(ClassCalls)
  Process.singleton_class.prepend(ClassCalls)
end

# frozen_string_literal: true

# Keeps the vulnerable example apps harmless, with or without ruzzy's bug
# detectors: nothing here ever starts a process. Kernel#system, spawn,
# exec, ` and open("|..."), IO.popen and Process.spawn are replaced by
# stand-ins that only say what would have run. (The detectors hook the
# same methods when fuzzing starts, in front of these stand-ins, so they
# still see every call.) The apps write no files at all.
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

  Kernel.prepend(KernelCalls)
  Kernel.singleton_class.prepend(KernelCalls)
  IO.singleton_class.prepend(ClassCalls)
  Process.singleton_class.prepend(ClassCalls)
end

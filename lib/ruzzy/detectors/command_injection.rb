# frozen_string_literal: true

require_relative "report"
require_relative "shell_command"
require_relative "../native"

module Ruzzy
  module Detectors
    # Command injection: a process-starting call (Kernel#system, spawn,
    # exec, `` ` `` and %x, Kernel#open and IO.read & co. with "|command",
    # IO.popen, Process.spawn, PTY.spawn; Open3 goes through spawn) that
    # would run the canary command: as the program itself, or in a command
    # position of a shell script (`ping -c 1 x;ruzzy`), its name maybe
    # followed by what the program appended (`tar -czf x;ruzzy.tar.gz`). Reported before
    # anything runs. Arguments of a program given as a list are data, never
    # commands (argument-array `system("ping", host)` is the safe form).
    # A command or program with a NUL byte never runs (Ruby raises
    # ArgumentError before it starts anything): it is left to the call.
    class CommandInjection < Report
      NAME = :command_injection
      SUMMARY = "shell commands and programs chosen by the input (system, spawn, exec, ``, popen, Open3, PTY)"

      # Programs whose `-c` argument is a script.
      SHELLS = %w[sh bash dash zsh ksh ash busybox].freeze

      # The canary in the places a shell runs it.
      WORDS = [CANARY, ";#{CANARY}", "|#{CANARY}", "&&#{CANARY}", "$(#{CANARY})", "`#{CANARY}`",
               "\n#{CANARY}"].freeze

      # [target, label, methods]: calls taking a command as arguments.
      COMMAND_SINKS = [
        [Kernel, "Kernel#", %i[system spawn exec `]],
        [Kernel.singleton_class, "Kernel.", %i[system spawn exec `]],
        [Process.singleton_class, "Process.", %i[spawn exec]],
        [IO.singleton_class, "IO.", %i[popen]]
      ].freeze

      # [target, label, methods]: calls taking a path that may be "|command".
      PIPE_SINKS = [
        [Kernel, "Kernel#", %i[open]],
        [Kernel.singleton_class, "Kernel.", %i[open]],
        [IO.singleton_class, "IO.", %i[read binread readlines foreach write binwrite]]
      ].freeze

      class << self
        def install
          command = ->(sink, args) { check_command(sink, args) }
          COMMAND_SINKS.each { |target, label, methods| Detectors.hook(target, label, methods, command) }
          Detectors.hook(PTY.singleton_class, "PTY.", %i[spawn getpty], command) if defined?(PTY)
          pipe = ->(sink, args) { check_pipe(sink, args) }
          PIPE_SINKS.each { |target, label, methods| Detectors.hook(target, label, methods, pipe) }
        end

        # A call starting a process with +args+ (an environment Hash
        # first and an options Hash last are left out): one String is a
        # command line, more are a program and its arguments. IO.popen
        # takes them as one String or one Array.
        def check_command(sink, args)
          args = args.drop(1) if args.first.is_a?(Hash)
          args = args[0...-1] if args.length > 1 && args.last.is_a?(Hash)
          if sink.end_with?("popen")
            return check_script(sink, args.first) if args.first.is_a?(String) && args.first != "-"
            return unless args.first.is_a?(Array)

            args = args.first
            args = args.drop(1) if args.first.is_a?(Hash)
            return check_program(sink, args)
          end
          return check_script(sink, args.first) if args.length == 1 && args.first.is_a?(String)

          check_program(sink, args)
        end

        # A path given to open or IO.read & co.: "|command" runs a shell.
        def check_pipe(sink, args)
          path = args.first
          check_script(sink, path[1..]) if path.is_a?(String) && path.start_with?("|")
        end

        # A program and its arguments (an Array [program, argv0] in place
        # of the program too).
        def check_program(sink, args)
          program = args.first.is_a?(Array) ? args.first.first : args.first
          return unless program.is_a?(String) && !program.include?("\0")

          Ruzzy::Native._guide_equal(program, CANARY)
          return report(sink, "would run #{program.inspect}") if canary?(program)

          script_index = args.index("-c")
          return unless SHELLS.include?(File.basename(program)) && script_index

          script = args[script_index + 1]
          check_script(sink, script) if script.is_a?(String)
        end

        # A command line run by a shell (or split into words).
        def check_script(sink, script)
          Detectors.guide(script, WORDS)
          return unless script.include?(CANARY) && !script.include?("\0")

          command = ShellCommand.commands(script).find { |word| canary?(word) }
          report(sink, "would run the command #{command.inspect} in #{script.inspect}") if command
        end

        # Whether +program+ is the canary command: named CANARY, or CANARY
        # and a suffix the program appended to what the input wrote
        # ("x;ruzzy" pasted into "export-x;ruzzy.tar.gz" runs
        # "ruzzy.tar.gz": the input chose the command all the same).
        def canary?(program)
          name = File.basename(program)
          name.start_with?(CANARY) && !name[CANARY.size]&.match?(/\w/)
        end

        def report(sink, what)
          Detectors.report(new("command injection: #{sink} #{what}, a command of the input's choosing", sink))
        end
      end
    end
  end
end

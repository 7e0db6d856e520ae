# frozen_string_literal: true

require "shellwords"
require_relative "../libfuzzer_args"
require_relative "../finding_kinds"
require_relative "expected_exceptions"

module Ruzzy
  # The findings of a run or campaign; here, the context they are reported
  # in.
  module Findings
    # What reporting a finding needs to know of the run it happens in: handed
    # to Findings once, by whoever runs the target (Session#fuzz, as
    # fuzzing starts: Findings.context=), so that Findings never reaches up
    # for the session. Until then Findings reports with NONE: no campaign,
    # nothing expected.
    #
    # +store+: the findings directory of the campaign this process works
    # for (Store), or nil: then a finding ends the run.
    # +expected+: the exceptions the target may raise (ExpectedExceptions).
    # +input_description+: what a report says of its input beside the
    # input's file, a callable given the input and what it raised (see
    # Session#input_description), or nil.
    # +libfuzzer_args+: the run's LibFuzzerArgs (where artifacts go, the
    # input files given).
    # +engine_writes_artifacts+: whether the engine writes a finding's
    # artifact itself (libFuzzer does; LibAFL's runtime names them its own
    # way).
    # +command_line+, +minimise_command_line+: the shell commands that
    # start the harness again, and that minimise a finding.
    # +hang_watch+: the run's watch for hangs in Ruby code, which stands
    # above Findings and is asked through this, never named: it answers
    # loop_frames (the frames the running input's hang stayed in, or nil),
    # ready_to_name? (whether they can be named now, at Ruby's safe point
    # after libFuzzer's alarm) and learn(groups) (hangs were filed: stop
    # their repeats sooner), as NoHangWatch does for a run without one.
    Context = Struct.new(:store, :expected, :input_description, :libfuzzer_args, :engine_writes_artifacts,
                         :command_line, :minimise_command_line, :hang_watch, keyword_init: true) do
      # Where the engine writes the artifact of a finding of +kind+ (a key
      # of KINDS: :crash, :slow_unit...) for an input whose SHA-1 is
      # +sha1+. -exact_artifact_path, meant for the one finding that ends
      # the run, is not used for a kind that does not (a slow unit).
      def artifact_path(kind, sha1)
        kind = KINDS.fetch(kind)
        libfuzzer_args.artifact_path(kind.prefix, sha1, exact: kind.ends_run?)
      end

      # The input file on the command line that holds +input+, or nil (the
      # input was generated: its artifact is written).
      def input_file(input)
        libfuzzer_args.input_files.find do |path|
          File.size(path) == input.bytesize && File.binread(path) == input
        rescue SystemCallError
          false
        end
      end

      # Writes a finding's +input+ to +path+ when the engine does not; the
      # line that says so ("" when the engine writes it).
      def save_artifact(path, input)
        return +"" if engine_writes_artifacts

        File.binwrite(path, input)
        +"==ruzzy== Test unit written to #{path}\n"
      rescue SystemCallError => e
        +"==ruzzy== ERROR: could not write the input to #{path}: #{e.message}\n"
      end
    end

    # The run's Context: Context::NONE until the run hands its own over.
    def self.context = @context || Context::NONE

    # Hands over the run's +context+ (Session#fuzz, once, as fuzzing
    # starts).
    def self.context=(context)
      @context = context
    end

    # The hang watch of a run that has none (Context#hang_watch): no hang
    # followed, none to stop sooner.
    module NoHangWatch
      module_function

      # No frames were followed: the frames of the moment name the hang.
      def loop_frames = nil

      # Nothing to wait for: a hang is named at once.
      def ready_to_name? = true

      # Nothing to stop sooner.
      def learn(_groups) = nil
    end

    class Context
      # The context before a run hands its own over: no campaign, no
      # expected exceptions, libFuzzer's defaults, this program's name, no
      # hang watch.
      NONE = new(store: nil, expected: ExpectedExceptions.new(nil), input_description: nil,
                 libfuzzer_args: LibFuzzerArgs.new([$PROGRAM_NAME]), engine_writes_artifacts: true,
                 command_line: $PROGRAM_NAME.shellescape, minimise_command_line: $PROGRAM_NAME.shellescape,
                 hang_watch: NoHangWatch).freeze
    end
  end
end

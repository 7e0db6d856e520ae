# frozen_string_literal: true

require "fileutils"
require "shellwords"
require_relative "corpus_dirs"
require_relative "../campaign_protocol"
require_relative "../shown_path"
require_relative "../findings/identity"
require_relative "../finding_kinds"
require_relative "../findings/store"

module Ruzzy
  module Campaign
    # Files what a worker that a finding ended left behind: its artifacts
    # (the input, `crash-<sha1>`, `timeout-<sha1>`...) with its report, in
    # the findings store. A hang that libFuzzer's alarm ended in the worker
    # ran for the worker's -timeout, not alone: it is a suspect
    # (Findings::Suspects), which HangCheck files only if it runs over the
    # campaign's hang threshold alone. An input of the corpus that ended the
    # worker before fuzzing started would end every worker: it moves out of
    # the corpus. The slow inputs a worker wrote there are kept in
    # SLOW_UNITS. The worker's lines in the campaign log then name where
    # each went (the worker's directory is deleted).
    class ArtifactFiling
      # The artifact of the finding that ended a worker.
      ARTIFACT = Findings::FINAL_ARTIFACT

      # Where ruzzy's bugs are reported.
      ISSUES = "https://github.com/ruzzy-rs/ruzzy/issues"

      # What a campaign says of an internal error (Findings::Identity::INTERNAL:
      # ruzzy's or its sanitizer runtime's own failure) reported at +path+.
      def self.internal_error_note(path)
        "  ruzzy: an internal error of ruzzy or its sanitizer runtime, not a bug in the fuzz target: " \
          "please report it with #{ShownPath.of(path)} at #{ISSUES}"
      end

      # +store+: the findings Store; +reproduction+ the campaign's
      # Findings::Reproduction; +display+ says what moved.
      def initialize(store:, reproduction:, display:)
        @store = store
        @reproduction = reproduction
        @display = display
      end

      # Files the artifacts +worker+ left, read from +corpus+ (its corpus
      # directories), it having run with -timeout +timeout+; yields the
      # identity of each and whether it made a new group. Returns how many.
      def file(worker, corpus:, timeout:)
        artifacts = Dir.children(worker.artifacts).grep(ARTIFACT).sort
        output = worker.output
        identity = Findings::Identity.of_report(output.report)
        filed = {}
        artifacts.each do |name|
          path = File.join(worker.artifacts, name)
          input = File.binread(path)
          outcome = file_one(identity, input, output.report, path, timeout)
          filed[path] = outcome && identity.group
          File.delete(path)
          set_aside(corpus, input, identity) unless output.initialised?
          yield identity, outcome == :new
          internal_error(identity) if outcome == :new && identity.kind == Findings::GROUP_KINDS.fetch(:internal)
        end
        keep_slow_units(worker.artifacts)
        output.release { |text| filed_text(text, filed, worker.artifacts) }
        artifacts.size
      end

      private

      # Says that +identity+'s new group is an internal error, to report.
      def internal_error(identity)
        @display.news(self.class.internal_error_note(File.join(@store.dir, identity.group, Findings::Store::REPORT)))
      end

      # +text+, printed by a worker whose artifacts were in +dir+, naming
      # where each artifact went (+filed+: path => its group, nil for a
      # suspected hang): a filed one as its group's input
      # (Reproduction#filed_in); a suspect's lines (the Reproduce and
      # Minimise lines, libFuzzer's "Test unit written to") give way to a
      # line saying what becomes of it. Any other line still naming +dir+
      # is left out: the directory is deleted.
      def filed_text(text, filed, dir)
        text = filed.reduce(text) do |result, (path, group)|
          next @reproduction.filed_in(result, from: path, dir: @store.dir, group:) if group

          without(result, path, "==ruzzy== the input is a suspected hang: the campaign runs it alone and files " \
                                "it only if it runs over the hang threshold\n")
        end
        without(text, "#{dir}/")
      end

      # +text+ without its lines naming +path+ (as it is or shell-escaped),
      # +note+ in place of the first.
      def without(text, path, note = nil)
        names = [path, Shellwords.escape(path)]
        noted = false
        text.lines.filter_map do |line|
          next line if names.none? { |name| line.include?(name) }
          next if noted || note.nil?

          noted = true
          note
        end.join
      end

      # Moves the slow inputs (`slow-unit-<sha1>`) a worker wrote into +dir+
      # into SLOW_UNITS, where its log names them (WorkerOutput).
      def keep_slow_units(dir)
        slow = Dir.children(dir).select { |name| name.start_with?(Findings::KINDS[:slow_unit].prefix) }
        return if slow.empty?

        kept = File.join(@store.dir, SLOW_UNITS)
        FileUtils.mkdir_p(kept)
        slow.each { |name| FileUtils.mv(File.join(dir, name), File.join(kept, name)) }
      end

      # Files one artifact; the Store#record outcome, or nil for a suspect.
      def file_one(identity, input, report, path, timeout)
        if Findings.hang?(identity.kind)
          @store.suspects.offer(identity.group, input, timeout)
          return nil
        end

        @store.record(identity, input, @reproduction.filed_in(report, from: path, dir: @store.dir,
                                                                      group: identity.group))
      end

      # Moves +input+ out of the +corpus+ directories: into its group, or
      # a hang's (a suspect, offered already) beside the suspects.
      def set_aside(corpus, input, identity)
        into = Findings.hang?(identity.kind) ? File.join(Findings::Suspects::DIR, "from-corpus") : identity.group
        FileUtils.mkdir_p(File.join(@store.dir, into))
        CorpusDirs.set_aside(corpus, input, File.join(@store.dir, into)).each do |file|
          @display.news("  moved #{ShownPath.of(file)} (it ends every worker) into #{into}/")
        end
      end
    end
  end
end

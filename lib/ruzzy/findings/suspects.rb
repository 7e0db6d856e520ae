# frozen_string_literal: true

require "fileutils"
require "digest/sha1"

module Ruzzy
  module Findings
    # Inputs a campaign's worker stopped as hangs before they had run for
    # the campaign's hang threshold: suspects, not findings. A hang is a
    # measured property of its input: a suspect becomes a finding only when
    # it runs over the threshold alone (Campaign::HangCheck runs it), and
    # then its group is named by that run. An input stopped after 0.1 s in
    # the loop of a hang found before, or after 0.5 s anywhere once a hang
    # was found (the worker's hang watch), or by libFuzzer's alarm in a worker
    # given a shorter -timeout, may finish a moment later: filed as it was,
    # it would be a finding that is not one.
    #
    # They wait in DIR/.suspects, one file each, named
    # "GROUP--MILLISECONDS--SHA1": the group the worker's own frames name
    # (Identity#group), how long it ran before it was stopped, and the
    # input's SHA-1. Files are written whole (renamed into place), so a
    # reader sees a suspect entirely or not at all. CONFIRMED lists, a line
    # each, a suspect group that a check found to hang and the group its
    # lone run was filed in (the two differ when the frames a worker saw
    # were not those the lone run saw): workers stop inputs in either's
    # loop early too, and a smaller suspect of either is checked against
    # the filed group's input.
    #
    # Invariants: a worker writes a suspect only if it is smaller than every
    # suspect of its group that the same process wrote before (so a hang met
    # again and again writes a handful of files, not one per meeting); only
    # the supervisor's check deletes them.
    class Suspects
      DIR = ".suspects"
      CONFIRMED = "confirmed"
      NAME = /\A(?<group>[a-z]+-\h{10})--(?<millis>\d+)--(?<sha1>\h{40})\z/

      # One suspect on disk.
      Suspect = Struct.new(:path, :group, :seconds, :bytes, keyword_init: true) do
        def input = File.binread(path)
      end

      def initialize(findings_dir)
        @dir = File.join(findings_dir, DIR)
        # The smallest suspect this process wrote, per group.
        @smallest = {}
      end

      # Keeps +input+, stopped after +seconds+ in the loop that +group+
      # names, unless this process kept one as small already; returns
      # whether it did.
      def offer(group, input, seconds)
        return false if (@smallest[group] || Float::INFINITY) <= input.bytesize

        @smallest[group] = input.bytesize
        FileUtils.mkdir_p(@dir)
        name = "#{group}--#{(seconds * 1000).round}--#{Digest::SHA1.hexdigest(input)}"
        temporary = File.join(@dir, ".#{name}.#{Process.pid}.tmp")
        File.binwrite(temporary, input)
        File.rename(temporary, File.join(@dir, name))
        true
      end

      # The suspects waiting, smallest first.
      def pending
        suspects = names.filter_map { |name| suspect(name) }
        suspects.sort_by { |suspect| [suspect.bytes, suspect.path] }
      end

      # The groups of the suspects waiting and of those confirmed: their
      # loops are hangs until a check says otherwise.
      def groups
        names.filter_map { |name| NAME.match(name)&.[](:group) } | confirmed.to_a.flatten
      end

      # The filed group of each suspect group that a check found to hang
      # (a filed group is its own).
      def confirmed
        File.readlines(File.join(@dir, CONFIRMED), chomp: true).to_h { |line| line.split(" ", 2) }
      rescue SystemCallError
        {}
      end

      # A check found +group+'s suspect to hang; its lone run was filed in
      # +filed+.
      def confirm(group, filed)
        known = confirmed
        lines = [group, filed].uniq.reject { |name| known.key?(name) }.map { |name| "#{name} #{filed}\n" }
        return if lines.empty?

        FileUtils.mkdir_p(@dir)
        File.write(File.join(@dir, CONFIRMED), lines.join, mode: "a")
      end

      # The suspect is dealt with.
      def delete(suspect)
        File.delete(suspect.path)
      rescue SystemCallError
        nil
      end

      private

      def suspect(name)
        match = NAME.match(name) or return
        path = File.join(@dir, name)
        Suspect.new(path:, group: match[:group], seconds: match[:millis].to_i / 1000.0, bytes: File.size(path))
      rescue SystemCallError
        nil
      end

      def names
        Dir.children(@dir)
      rescue SystemCallError
        []
      end
    end
  end
end

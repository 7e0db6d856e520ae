# frozen_string_literal: true

require "json"
require "fileutils"
require "digest/sha1"
require_relative "identity"

module Ruzzy
  module Findings
    # A findings directory: one subdirectory per group of findings with the
    # same identity (Identity#group), holding the smallest input seen so far
    # (`input`), its report (`report.txt`) and what is known of the group
    # (`group.json`: kind, token, the title of that input's finding, number
    # of findings, bytes of the input, first and last seen).
    # `campaign.json` at the top says how to run the harness again.
    #
    # Invariants: every file is written whole (a temporary file renamed
    # into place), so a process killed while recording leaves the previous
    # state; a group's input is never replaced by a larger one; its input,
    # report and title are those of one finding. Counts are
    # written at most once per FLUSH_SECONDS per group, and by #flush: a
    # process that dies without flushing loses at most that much counting,
    # never a group.
    class Store
      FLUSH_SECONDS = 1.0
      CAMPAIGN = "campaign.json"
      GROUP = "group.json"
      INPUT = "input"
      REPORT = "report.txt"

      # A group as read from disk.
      Group = Struct.new(:name, :kind, :token, :title, :findings, :bytes, :first_seen, :last_seen, :dir,
                         keyword_init: true) do
        def input_path
          File.join(dir, INPUT)
        end

        def report_path
          File.join(dir, REPORT)
        end
      end

      attr_reader :dir

      def initialize(dir)
        @dir = File.expand_path(dir)
        @groups = {}
        @unflushed = {}
      end

      # Records one finding of +identity+ with +input+ and its +report+;
      # returns :new (the first of its group), :smaller (a smaller input
      # replaced the group's) or :repeat.
      def record(identity, input, report)
        group = @groups[identity.group] ||= load_group(identity.group) || new_group(identity)
        group.findings += 1
        group.last_seen = now
        outcome = if group.bytes.nil? then :new
                  elsif input.bytesize < group.bytes then :smaller
                  else
                    :repeat
                  end
        outcome == :repeat ? flush_later(group) : replace_input(group, identity, input, report)
        outcome
      end

      # Makes +input+ (with its +report+) the input of +identity+'s group if
      # it is smaller than the one there; returns whether it was.
      def offer_smaller(identity, input, report)
        group = @groups[identity.group] ||= load_group(identity.group)
        return false unless group && input.bytesize < group.bytes.to_i

        replace_input(group, identity, input, report)
        true
      end

      # Writes the counts not written yet.
      def flush
        @unflushed.each_key { |name| write_group(@groups.fetch(name)) }
        @unflushed.clear
      end

      # Every group on disk, most frequent first.
      def groups
        return [] unless File.directory?(@dir)

        Dir.children(@dir).sort.filter_map { |name| load_group(name) }.sort_by { |group| [-group.findings, group.name] }
      end

      # The group named +name+ (or the one name starts with), or nil.
      def find(name)
        exact = load_group(name)
        return exact if exact

        matches = groups.select { |group| group.name.start_with?(name) }
        matches.size == 1 ? matches.first : nil
      end

      # What campaign.json says (the command that runs the harness).
      def campaign
        JSON.parse(File.read(File.join(@dir, CAMPAIGN)))
      rescue Errno::ENOENT, JSON::ParserError
        nil
      end

      def write_campaign(settings)
        FileUtils.mkdir_p(@dir)
        write(File.join(@dir, CAMPAIGN), "#{JSON.pretty_generate(settings)}\n")
      end

      private

      def now
        Time.now.utc.strftime("%Y-%m-%dT%H:%M:%SZ")
      end

      def new_group(identity)
        Group.new(name: identity.group, kind: identity.kind, token: identity.token, title: identity.title,
                  findings: 0, bytes: nil, first_seen: now, last_seen: now, dir: File.join(@dir, identity.group))
      end

      def load_group(name)
        path = File.join(@dir, name, GROUP)
        return nil unless File.file?(path)

        fields = JSON.parse(File.read(path)).transform_keys(&:to_sym).slice(*Group.members)
        Group.new(**fields, name:, dir: File.join(@dir, name))
      rescue JSON::ParserError, SystemCallError
        nil
      end

      # Makes +input+, its +report+ and the title of its +identity+ the
      # group's, and writes the group.
      def replace_input(group, identity, input, report)
        group.bytes = input.bytesize
        group.title = identity.title
        write(File.join(group.dir, INPUT), input)
        write(File.join(group.dir, REPORT), report)
        write_group(group)
      end

      def flush_later(group)
        due = @unflushed[group.name] ||= Process.clock_gettime(Process::CLOCK_MONOTONIC) + FLUSH_SECONDS
        return if Process.clock_gettime(Process::CLOCK_MONOTONIC) < due

        @unflushed.delete(group.name)
        write_group(group)
      end

      def write_group(group)
        fields = group.to_h.except(:name, :dir)
        write(File.join(group.dir, GROUP), "#{JSON.pretty_generate(fields)}\n")
      end

      def write(path, content)
        FileUtils.mkdir_p(File.dirname(path))
        temporary = "#{path}.#{Process.pid}.tmp"
        File.binwrite(temporary, content)
        File.rename(temporary, path)
      end
    end
  end
end

# frozen_string_literal: true

require "json"
require "fileutils"
require "digest/sha1"
require_relative "identity"
require_relative "../finding_kinds"
require_relative "suspects"

module Ruzzy
  module Findings
    # A findings directory: one subdirectory per group of findings with the
    # same identity (Identity#group), holding the smallest input seen so far
    # (`input`), its report (`report.txt`) and what is known of the group
    # (`group.json`: kind, token, the title of that input's finding, number
    # of findings, bytes of the input, first and last seen, what the input
    # did run alone).
    # `campaign.json` at the top says how to run the harness again.
    #
    # Invariants: every file is written whole (a temporary file renamed
    # into place), so a process killed while recording leaves the previous
    # state; a group's input is never replaced by a larger one; its input,
    # report and title are those of one finding. Counts are
    # written at most once per FLUSH_SECONDS per group, and by #flush: a
    # process that dies without flushing loses at most that much counting,
    # never a group.
    #
    # Several processes (a campaign's workers and its supervisor) record
    # into one directory at once. Every change to a group on disk is made
    # under an exclusive lock of LOCK (flock: released when a process
    # dies) from what is on disk then, never from what this process read
    # earlier: of two processes that find the same bug at once exactly
    # one gets :new, counts are added (each process adds its own, not yet
    # written, to the count on disk), and the smaller input wins. A repeat
    # is known without the lock or the disk: a group's input only ever
    # shrinks, so an input no smaller than the one this process last saw
    # is no smaller than the one on disk.
    class Store
      FLUSH_SECONDS = 1.0
      CAMPAIGN = "campaign.json"
      GROUP = "group.json"
      INPUT = "input"
      REPORT = "report.txt"
      LOCK = ".lock"
      # Where a new group is written before it is renamed into place.
      STAGING = ".new-group"
      # What a group's input did run alone (Group#alone): failed as filed,
      # passed, or met another finding.
      ALONE = %w[fails passes differs].freeze

      # A group as read from disk.
      # +seconds+: how long a hang's input ran alone (nil: not a hang, or
      # filed before that was measured).
      # +site+: where the exception of the input's finding was raised
      # (Identity#site; nil: another kind, or filed before sites were kept).
      # +alone+: what the input did when run by itself (Campaign::AloneCheck):
      # one of ALONE, or nil (not checked since it became the group's).
      Group = Struct.new(:name, :kind, :token, :title, :site, :findings, :bytes, :first_seen, :last_seen, :dir,
                         :seconds, :alone, keyword_init: true) do
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
        # The smallest input size seen per group name (nil: none yet).
        @bytes = {}
        # Findings per group name not yet added to the count on disk, and
        # when they are due.
        @unflushed = Hash.new(0)
        @due = {}
      end

      # Records one finding of +identity+ with +input+ and its +report+;
      # returns :new (the first of its group, in any process), :smaller (a
      # smaller input replaced the group's) or :repeat. +seconds+: how long
      # the input ran alone (a hang's: Campaign::HangCheck measured it),
      # and +alone+ what it did alone (one of ALONE: "fails" when the run
      # that met it ran it alone), kept with the input they belong to.
      def record(identity, input, report, seconds: nil, alone: nil)
        name = identity.group
        known = @bytes[name]
        if known && input.bytesize >= known
          @unflushed[name] += 1
          flush_later(name)
          return :repeat
        end

        locked do
          group = load_group(name)
          outcome = if group.nil? then :new
                    elsif input.bytesize < group.bytes.to_i then :smaller
                    else
                      :repeat
                    end
          group ||= new_group(identity)
          group.findings += 1 + @unflushed.delete(name).to_i
          group.last_seen = now
          @due.delete(name)
          if outcome == :repeat
            write_group(group)
          else
            group.seconds = seconds
            replace_input(group, identity, input, report, alone:)
          end
          @bytes[name] = group.bytes
          outcome
        end
      end

      # Makes +input+ (with its +report+, and what it did +alone+ as
      # #record takes it) the input of +identity+'s group if it is smaller
      # than the one there; returns whether it was.
      def offer_smaller(identity, input, report, alone: nil)
        locked do
          group = load_group(identity.group)
          return false unless group && input.bytesize < group.bytes.to_i

          replace_input(group, identity, input, report, alone:)
          @bytes[group.name] = group.bytes
          true
        end
      end

      # Records that the input of the group +name+ did +alone+ (one of
      # ALONE) when run by itself, if the group's input is still the one of
      # +bytes+ bytes that ran; returns whether it was recorded.
      def note_alone(name, alone, bytes)
        locked do
          group = load_group(name)
          return false unless group && group.bytes == bytes

          group.alone = alone
          write_group(group)
          true
        end
      end

      # Adds the counts not written yet to those on disk.
      def flush
        return if @unflushed.empty?

        locked do
          @unflushed.each { |name, count| add_count(name, count) }
        end
        @unflushed.clear
        @due.clear
      end

      # Every group on disk, most frequent first.
      def groups
        return [] unless File.directory?(@dir)

        Dir.children(@dir).sort.filter_map { |name| load_group(name) }.sort_by { |group| [-group.findings, group.name] }
      end

      # The names of the hangs' groups: those on file and those suspected
      # (Suspects), read from directory names only (the watch of every
      # campaign worker asks every few seconds).
      def hang_groups
        return [] unless File.directory?(@dir)

        prefix = "#{KINDS[:timeout].group}-"
        on_file = Dir.children(@dir).select { |name| name.start_with?(prefix) }
        on_file.select { |name| File.file?(File.join(@dir, name, GROUP)) } | suspects.groups
      end

      # The inputs stopped as hangs that wait for a check (Suspects).
      def suspects
        @suspects ||= Suspects.new(@dir)
      end

      # The group named exactly +name+, or nil.
      def named(name) = load_group(name)

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
                  site: identity.site, findings: 0, bytes: nil, first_seen: now, last_seen: now,
                  dir: File.join(@dir, identity.group))
      end

      def load_group(name)
        path = File.join(@dir, name, GROUP)
        return nil unless File.file?(path)

        fields = JSON.parse(File.read(path)).transform_keys(&:to_sym).slice(*Group.members)
        Group.new(**fields, name:, dir: File.join(@dir, name))
      rescue JSON::ParserError, SystemCallError
        nil
      end

      # Makes +input+, its +report+ and the title and site of its
      # +identity+ the group's, with what it did +alone+ (nil: not known),
      # and writes the group (under the lock).
      def replace_input(group, identity, input, report, alone: nil)
        group.bytes = input.bytesize
        group.title = identity.title
        group.site = identity.site
        group.alone = alone
        return write_new_group(group, input, report) unless File.directory?(group.dir)

        write(File.join(group.dir, INPUT), input)
        write(File.join(group.dir, REPORT), report)
        write_group(group)
      end

      # Writes a new group whole, then renames it into place (under the
      # lock): a process that dies while it records (a worker whose own
      # report of the finding fails) leaves no group directory without its
      # group.json, beside the others, only a STAGING one, which is no group.
      def write_new_group(group, input, report)
        staged = group.dup.tap { |copy| copy.dir = File.join(@dir, STAGING, group.name) }
        FileUtils.rm_rf(staged.dir)
        write(File.join(staged.dir, INPUT), input)
        write(File.join(staged.dir, REPORT), report)
        write_group(staged)
        File.rename(staged.dir, group.dir)
      end

      # Writes +name+'s unwritten count once it is due.
      def flush_later(name)
        due = @due[name] ||= Process.clock_gettime(Process::CLOCK_MONOTONIC) + FLUSH_SECONDS
        return if Process.clock_gettime(Process::CLOCK_MONOTONIC) < due

        count = @unflushed.delete(name)
        @due.delete(name)
        locked { add_count(name, count) }
      end

      # Adds +count+ findings to +name+'s group on disk (under the lock).
      def add_count(name, count)
        group = load_group(name) or return

        group.findings += count
        group.last_seen = now
        write_group(group)
      end

      def write_group(group)
        fields = group.to_h.except(:name, :dir)
        write(File.join(group.dir, GROUP), "#{JSON.pretty_generate(fields)}\n")
      end

      # Runs the block holding the directory's lock (exclusive among
      # processes; re-entrant within one).
      def locked
        return yield if @locked

        FileUtils.mkdir_p(@dir)
        File.open(File.join(@dir, LOCK), File::RDWR | File::CREAT, 0o644) do |file|
          file.flock(File::LOCK_EX)
          @locked = true
          yield
        ensure
          @locked = false
        end
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

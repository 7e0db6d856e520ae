# frozen_string_literal: true

# May use: nothing.

module Ruzzy
  # A campaign (`ruzzy --keep-going`): a supervisor process runs the harness
  # in worker processes, one at a time, and keeps going after findings.
  #
  # What the supervisor and its workers agree on lives here: the worker
  # learns the findings directory from ENV_FINDINGS_DIR and records every
  # Ruby exception and detector finding there itself, going on with the
  # next input; a finding that ends the worker (a sanitizer report, a
  # segfault, a timeout, running out of memory) is recorded by the
  # supervisor from the artifact and the report, and a new worker starts.
  # A worker announces a new group on standard error with new_group_line,
  # and the lines its coverage reached with reached_line; a fuzz test's
  # worker announces the corpus directory its test chose with corpus_line
  # (the supervisor does not load the test file), and a target that says
  # what it found when it started (`ruzzy rack`'s routes) says it with
  # target_line, shown once. A worker's note for the user (code loaded
  # while fuzzing outgrew the map) is a note_line: each kind is shown once.
  module Campaign
    # The environment variable that makes a process a campaign's worker.
    ENV_FINDINGS_DIR = "RUZZY_FINDINGS_DIR"

    # -timeout once a hang has been found (unless -timeout is given): a hang
    # found again costs this much instead of ruzzy's default, which suits
    # the first (OSS-Fuzz's value).
    REPEAT_TIMEOUT = 2

    # How long before libFuzzer's -timeout a worker's hang watch stops an
    # input (Engine::HangWatch): one stopped that late ran for the whole hang
    # threshold as far as the worker could tell (HangCheck checks it even
    # when its loop's other inputs finished).
    WATCH_MARGIN = 0.5

    REACHED = /\A==ruzzy== reached: (\d+) lines and (\d+) edges of your code, (\d+) lines in all; (\d+) inputs run$/

    NEW_GROUP = /\A==ruzzy== new finding group (\S+) \(([^)]*)\): (.*)$/

    CORPUS = /\A==ruzzy== corpus: (.+)$/

    TARGET = /\A==ruzzy== target: (.+)$/

    NOTE = /\A==ruzzy== note: (.+)$/

    # Where, in the findings directory, a campaign keeps the slow inputs
    # (`slow-unit-<sha1>`) its workers wrote beside their artifacts: a
    # worker's own artifacts directory is deleted once it ended.
    SLOW_UNITS = "slow-units"

    module_function

    # The line a worker prints for the first finding of a group: its name,
    # kind and title (Findings::Identity's group, kind, title).
    def new_group_line(group, kind, title)
      "==ruzzy== new finding group #{group} (#{kind}): #{title}\n"
    end

    # The line a worker prints now and then: the distinct lines and the
    # edges its coverage reached in the user's code, the lines in all, and
    # the inputs it ran (the engine's progress lines can be minutes apart).
    def reached_line(lines, edges, all_lines, executions)
      "==ruzzy== reached: #{lines} lines and #{edges} edges of your code, #{all_lines} lines in all; " \
        "#{executions} inputs run\n"
    end

    # [lines, edges, all_lines, executions] of a reached_line, or nil.
    def parse_reached(line)
      line.match(REACHED)&.captures&.map(&:to_i)
    end

    # The group name, kind and title of a new_group_line, or nil.
    def parse_new_group(line)
      line.match(NEW_GROUP)&.captures
    end

    # The line a fuzz test's worker prints before fuzzing: its corpus
    # directory, absolute.
    def corpus_line(dir)
      "==ruzzy== corpus: #{dir}\n"
    end

    # The directory of a corpus_line, or nil.
    def parse_corpus(line)
      line[CORPUS, 1]
    end

    # The line a worker prints for what its target found when it started
    # (one line of text), for the supervisor to show once.
    def target_line(text)
      "==ruzzy== target: #{text.lines.first.to_s.chomp}\n"
    end

    # The text of a target_line, or nil.
    def parse_target(line)
      line[TARGET, 1]
    end

    # The line a worker prints for a note the campaign shows the user (one
    # line of text): the worker's own INFO lines go only to the log.
    def note_line(text)
      "==ruzzy== note: #{text.lines.first.to_s.chomp}\n"
    end

    # The text of a note_line, or nil.
    def parse_note(line)
      line[NOTE, 1]
    end

    # What makes two notes the same kind, shown once: their words before
    # the first "(" (the late-code note names the file that outgrew the
    # map, which varies from worker to worker).
    def note_kind(text)
      text[/\A[^(]*/].strip
    end
  end
end

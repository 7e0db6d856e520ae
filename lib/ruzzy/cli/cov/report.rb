# frozen_string_literal: true

require "cgi"
require "fileutils"
require "json"
require_relative "../../shown_path"

module Ruzzy
  module Cov
    # Writes what a replay covered: index.html (per-file totals, then each
    # file's source with covered and uncovered lines and branch arms, and the
    # corpus file that first reached each line), lcov.info, a
    # SimpleCov-compatible .resultset.json, and RAISED (every input that
    # raised, with its exception); and a one-screen summary, which names a
    # few of the inputs that raised.
    class Report
      # The file of the inputs that raised, a line each: `PATH: Class: message`
      # (the message's newlines written as \n).
      RAISED = "raised.txt"
      # How many different exceptions the summary shows an input of.
      RAISED_SHOWN = 3
      # The longest message the summary shows.
      SHOWN_MESSAGE = 160

      # Adds the counts of +result+ (one file of Coverage.result) to +target+.
      def self.add_counts(target, result)
        (result[:lines] || []).each_with_index do |count, line|
          target[:lines][line] = count.nil? ? target[:lines][line] : (target[:lines][line] || 0) + count
        end
        (result[:branches] || {}).each do |branch, arms|
          into = target[:branches][branch] ||= {}
          arms.each { |arm, count| into[arm] = (into[arm] || 0) + count }
        end
      end

      FileTotals = Struct.new(:path, :lines, :covered_lines, :branches, :covered_branches)

      # +root+ is the project directory: the HTML report names files under it
      # relative to it (lcov.info and .resultset.json keep absolute paths,
      # as the tools that read them expect). +sections+ add to the summary
      # and the page (each has #summary and #html(shown)).
      def initialize(replay, filter, root: Dir.pwd, sections: [])
        @replay = replay
        @filter = filter
        @files = replay.coverage.keys.sort
        @root = "#{File.expand_path(root)}/"
        @sections = sections
      end

      # Per-file totals.
      def totals
        @totals ||= @files.map do |path|
          data = @replay.coverage[path]
          lines = data[:lines].compact
          arms = data[:branches].values.flat_map(&:values)
          FileTotals.new(path, lines.size, lines.count(&:positive?), arms.size, arms.count(&:positive?))
        end
      end

      def write(dir)
        FileUtils.mkdir_p(dir)
        File.write(File.join(dir, "lcov.info"), lcov)
        File.write(File.join(dir, ".resultset.json"), JSON.pretty_generate(simplecov))
        File.write(File.join(dir, "index.html"), html)
        raised = File.join(dir, RAISED)
        @replay.raised.empty? ? FileUtils.rm_f(raised) : File.write(raised, raised_list)
      end

      def summary(dir)
        lines = totals.sum(&:lines)
        covered = totals.sum(&:covered_lines)
        arms = totals.sum(&:branches)
        taken = totals.sum(&:covered_branches)
        text = +"ruzzy cov: #{@replay.inputs.size} inputs (#{@replay.raised.size} raised, " \
                "#{@replay.crashed.size} crashed the process); #{@files.size} files#{scope}; " \
                "lines #{covered}/#{lines} (#{percent(covered, lines)}), " \
                "branches #{taken}/#{arms} (#{percent(taken, arms)})\n"
        @sections.each { |section| text << "ruzzy cov: #{section.summary}\n" }
        @replay.crashed.each { |path, why| text << "  crashed the process: #{path}: #{why.lines.first&.strip}\n" }
        text << raised_summary(dir)
        text << "ruzzy cov: report in #{File.join(dir, "index.html")}, lcov.info and .resultset.json"
      end

      # The summary's lines about the inputs that raised: one input of each
      # of the first RAISED_SHOWN exceptions (class and message), how many
      # more raised, and where they all are.
      def raised_summary(dir)
        return "" if @replay.raised.empty?

        alike = @replay.raised.group_by { |_, raised| raised }.values
        named = alike.first(RAISED_SHOWN)
        text = +""
        named.each do |(path, raised), *others|
          more = others.empty? ? "" : " (and #{others.size} more input#{"s" unless others.size == 1} like it)"
          text << "  raised: #{shown(path)}: #{raised.class_name}: #{shown_message(raised.message)}#{more}\n"
        end
        rest = @replay.raised.size - named.sum(&:size)
        text << "  ... and #{rest} more input#{"s" unless rest == 1} that raised\n" if rest.positive?
        text << "ruzzy cov: every input that raised, with its exception: #{File.join(dir, RAISED)}\n"
      end

      # Every input that raised, a line each (RAISED).
      def raised_list
        @replay.raised.map do |path, raised|
          "#{shown(path)}: #{raised.class_name}: #{raised.message.gsub("\n", "\\n")}\n"
        end.join
      end

      # Which files the report shows, when that is not what was asked for
      # explicitly.
      def scope
        @filter[:include].empty? && !@filter[:all] ? " of your code (--all for every file)" : ""
      end

      def lcov
        @files.map do |path|
          data = @replay.coverage[path]
          out = +"TN:\nSF:#{path}\n"
          data[:lines].each_with_index { |count, line| out << "DA:#{line + 1},#{count}\n" unless count.nil? }
          data[:branches].each_with_index do |(branch, arms), block|
            arms.each_with_index { |(_, count), arm| out << "BRDA:#{branch[2]},#{block},#{arm},#{count}\n" }
          end
          total = totals.find { |t| t.path == path }
          out << "BRF:#{total.branches}\nBRH:#{total.covered_branches}\n"
          out << "LF:#{total.lines}\nLH:#{total.covered_lines}\nend_of_record\n"
        end.join
      end

      def simplecov
        coverage = @files.to_h do |path|
          data = @replay.coverage[path]
          branches = data[:branches].to_h do |branch, arms|
            [branch.inspect, arms.transform_keys(&:inspect)]
          end
          [path, { "lines" => data[:lines], "branches" => branches }]
        end
        { "ruzzy cov" => { "coverage" => coverage, "timestamp" => Time.now.to_i } }
      end

      def percent(part, whole)
        whole.zero? ? "n/a" : format("%.1f%%", 100.0 * part / whole)
      end

      def html
        <<~HTML
          <!DOCTYPE html>
          <html lang="en"><head><meta charset="utf-8"><title>ruzzy coverage</title>
          <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
            table.files { border-collapse: collapse; } table.files td, table.files th { padding: 2px 12px; text-align: right; }
            table.files td:first-child, table.files th:first-child { text-align: left; }
            pre { margin: 0; } .src { border-collapse: collapse; font: 12px/1.35 monospace; width: 100%; }
            .src td { padding: 0 6px; vertical-align: top; white-space: pre; }
            tr.covered td.code { background: #e6f6e6; } tr.uncovered td.code { background: #fbe3e3; }
            tr.partial td.code { background: #fff4cc; } td.num, td.hits { color: #888; text-align: right; }
            td.first { color: #666; font-size: 11px; } section.file { margin-top: 2.5em; }
          </style></head><body>
          <h1>ruzzy coverage</h1>
          <p id="summary">#{CGI.escapeHTML(summary_line)}</p>
          #{crashed_html}
          #{raised_html}
          #{@sections.map { |section| section.html(method(:shown)) }.join("\n")}
          <h2>Ruby files</h2>
          <table class="files" id="files"><tr><th>file</th><th>lines</th><th>covered</th><th>%</th><th>branches</th><th>taken</th><th>%</th></tr>
          #{totals.each_with_index.map { |t, i| file_row(t, i) }.join("\n")}
          </table>
          #{@files.each_with_index.map { |path, index| file_html(path, index) }.join("\n")}
          </body></html>
        HTML
      end

      private

      def summary_line
        summary("").lines.first.strip
      end

      def crashed_html
        return "" if @replay.crashed.empty?

        items = @replay.crashed.map { |path, why| "<li>#{CGI.escapeHTML(shown(path))}: #{CGI.escapeHTML(why)}</li>" }
        "<h2>Inputs that crashed the process</h2><ul id=\"crashed\">#{items.join}</ul>"
      end

      def raised_html
        return "" if @replay.raised.empty?

        items = @replay.raised.map do |path, raised|
          "<li>#{CGI.escapeHTML("#{shown(path)}: #{raised.class_name}: #{raised.message}")}</li>"
        end
        "<h2>Inputs that raised</h2><ul id=\"raised\">#{items.join}</ul>"
      end

      # The first line of +message+, cut at SHOWN_MESSAGE characters.
      def shown_message(message)
        line = message.lines.first.to_s.chomp
        line.size > SHOWN_MESSAGE ? "#{line[0, SHOWN_MESSAGE]}..." : line
      end

      def file_row(total, index)
        "<tr><td><a href=\"#file-#{index}\">#{CGI.escapeHTML(shown(total.path))}</a></td><td>#{total.lines}</td>" \
          "<td>#{total.covered_lines}</td><td>#{percent(total.covered_lines, total.lines)}</td>" \
          "<td>#{total.branches}</td><td>#{total.covered_branches}</td>" \
          "<td>#{percent(total.covered_branches, total.branches)}</td></tr>"
      end

      def file_html(path, index)
        data = @replay.coverage[path]
        source = File.exist?(path) ? File.readlines(path, chomp: true) : []
        missed = missed_branch_lines(data)
        rows = source.each_with_index.map do |text, i|
          line_row(text, i + 1, data[:lines][i], missed.fetch(i + 1, nil), @replay.first_hits.dig(path, i + 1))
        end
        "<section class=\"file\" id=\"file-#{index}\"><h2>#{CGI.escapeHTML(shown(path))}</h2>" \
          "<table class=\"src\">#{rows.join}</table></section>"
      end

      def line_row(text, number, count, missed_arms, first_index)
        css = if count.nil? then "never"
              elsif count.zero? then "uncovered"
              elsif missed_arms then "partial"
              else
                "covered"
              end
        first = first_index ? "first: #{File.basename(@replay.inputs[first_index])}" : ""
        note = missed_arms ? " (branch not taken: #{missed_arms.join(", ")})" : ""
        "<tr class=\"#{css}\"><td class=\"num\">#{number}</td><td class=\"hits\">#{count}</td>" \
          "<td class=\"code\">#{CGI.escapeHTML(text)}</td><td class=\"first\">#{CGI.escapeHTML(first + note)}</td></tr>"
      end

      # +path+ as the report shows it: relative to the project when inside it.
      def shown(path)
        ShownPath.of(path, @root)
      end

      # line => names of branch arms starting there that were never taken
      def missed_branch_lines(data)
        missed = {}
        data[:branches].each_value do |arms|
          arms.each { |arm, count| (missed[arm[2]] ||= []) << arm[0].to_s if count.zero? }
        end
        missed
      end
    end
  end
end

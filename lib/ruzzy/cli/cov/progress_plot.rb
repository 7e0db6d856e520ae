# frozen_string_literal: true

require "cgi"
require_relative "../../campaign/progress_log"

module Ruzzy
  module Cov
    # The report's plot of a campaign (`ruzzy --keep-going`): coverage over
    # time from the findings directory's progress.csv, with a mark where
    # each finding group appeared. An inline SVG: the page stays one file
    # with nothing to fetch.
    class ProgressPlot
      WIDTH = 720
      HEIGHT = 260
      MARGIN = { left: 56, right: 16, top: 16, bottom: 40 }.freeze

      # The plot of the campaign in +dir+, or nil when its log has fewer
      # than two rows.
      def self.from(dir)
        rows = Campaign::ProgressLog.read(dir)
        rows.size < 2 ? nil : new(rows)
      end

      def initialize(rows)
        @rows = rows
      end

      def summary
        first = @rows.first
        last = @rows.last
        "campaign: coverage #{first.coverage.to_i} -> #{last.coverage.to_i} in #{last.seconds.round} s, " \
          "#{last.executions.to_i} executions, #{last.groups.to_i} finding group(s)"
      end

      def html(_shown)
        <<~HTML
          <h2>Coverage over the campaign</h2>
          <svg id="progress" xmlns="http://www.w3.org/2000/svg" width="#{WIDTH}" height="#{HEIGHT}" role="img"
               aria-label="#{CGI.escapeHTML(summary)}" style="font: 11px system-ui, sans-serif">
            <rect x="#{MARGIN[:left]}" y="#{MARGIN[:top]}" width="#{plot_width}" height="#{plot_height}" fill="#fafafa" stroke="#ccc"/>
            #{axes}
            #{finding_marks}
            <polyline class="coverage" fill="none" stroke="#2a7ab0" stroke-width="2" points="#{points}"/>
          </svg>
          <p class="plot-note">#{CGI.escapeHTML(summary)}; red marks: a new finding group.</p>
        HTML
      end

      private

      def plot_width
        WIDTH - MARGIN[:left] - MARGIN[:right]
      end

      def plot_height
        HEIGHT - MARGIN[:top] - MARGIN[:bottom]
      end

      def max_seconds
        [@rows.map(&:seconds).max, 1].max
      end

      def max_coverage
        [@rows.map(&:coverage).max, 1].max
      end

      def x(seconds)
        (MARGIN[:left] + (plot_width * seconds / max_seconds)).round(1)
      end

      def y(coverage)
        (MARGIN[:top] + plot_height - (plot_height * coverage / max_coverage)).round(1)
      end

      def points
        @rows.map { |row| "#{x(row.seconds)},#{y(row.coverage)}" }.join(" ")
      end

      # Ticks at 0, half and the maximum of each axis, with the axis names.
      def axes
        middle = MARGIN[:top] + (plot_height / 2)
        [*time_ticks, *coverage_ticks,
         "<text x=\"#{MARGIN[:left] + (plot_width / 2)}\" y=\"#{HEIGHT - 6}\" text-anchor=\"middle\">time</text>",
         "<text x=\"12\" y=\"#{middle}\" text-anchor=\"middle\" transform=\"rotate(-90 12 #{middle})\">" \
         "coverage (edges)</text>"].join("\n")
      end

      def time_ticks
        bottom = MARGIN[:top] + plot_height
        [0, max_seconds / 2.0, max_seconds].map do |seconds|
          "<text x=\"#{x(seconds)}\" y=\"#{bottom + 14}\" text-anchor=\"middle\">#{seconds.round} s</text>"
        end
      end

      def coverage_ticks
        [0, max_coverage / 2.0, max_coverage].map do |coverage|
          "<text x=\"#{MARGIN[:left] - 6}\" y=\"#{y(coverage) + 4}\" text-anchor=\"end\">#{coverage.round}</text>"
        end
      end

      # A red line where the number of groups went up.
      def finding_marks
        @rows.each_cons(2).select { |before, after| after.groups > before.groups }.map do |_, row|
          "<line class=\"finding\" x1=\"#{x(row.seconds)}\" x2=\"#{x(row.seconds)}\" y1=\"#{MARGIN[:top]}\" " \
            "y2=\"#{MARGIN[:top] + plot_height}\" stroke=\"#d33\" stroke-dasharray=\"4 3\"/>"
        end.join("\n")
      end
    end
  end
end

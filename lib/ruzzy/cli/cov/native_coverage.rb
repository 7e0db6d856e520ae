# frozen_string_literal: true

require "cgi"
require "open3"
require "tmpdir"
require "fileutils"
require "rbconfig"
require_relative "../../campaign_protocol"

module Ruzzy
  module Cov
    # The coverage of a C extension built with a sanitizer and
    # -fsanitize=fuzzer-no-link, per function: libFuzzer's own
    # -print_coverage=1 after running the inputs once (`ruzzy
    # --sanitizer=NAME HARNESS -runs=0 -print_coverage=1 CORPUS`, as a
    # campaign's worker so that an input that raises does not end the run).
    # Inputs that crashed the Ruby replay are left out: one would end the
    # run before libFuzzer prints anything.
    class NativeCoverage
      Function = Struct.new(:name, :file, :line, :edges, :covered_edges, keyword_init: true)

      # COVERED_FUNC: hits: 1 edges: 5/13 name /path/file.c:49
      LINE = %r{\A(?:UN)?COVERED_FUNC: hits: \d+ edges: (\d+)/(\d+) (\S+) (\S+):(\d+)\s*\z}
      # Functions in these files are Ruby code (ruzzy's own counters).
      RUBY_FILE = /\.rb\z/

      attr_reader :functions

      # Measures the coverage of +inputs+ (paths); +command+ starts the
      # harness (ruzzy with its options, the harness). nil when libFuzzer
      # printed no C function.
      def self.measure(command, inputs)
        Dir.mktmpdir("ruzzy-cov-native") do |work|
          corpus = File.join(work, "corpus")
          FileUtils.mkdir_p(corpus)
          inputs.each_with_index { |path, index| FileUtils.cp(path, File.join(corpus, index.to_s)) }
          environment = { Campaign::ENV_FINDINGS_DIR => File.join(work, "findings") }
          output, = Open3.capture2e(environment, *command, "-runs=0", "-print_coverage=1", corpus, chdir: work)
          functions = parse(output)
          functions.empty? ? nil : new(functions)
        end
      end

      def self.parse(text)
        text.scrub.each_line.filter_map do |line|
          match = line.match(LINE)
          next unless match && !match[4].match?(RUBY_FILE)

          Function.new(name: match[3], file: File.expand_path(match[4]), line: match[5].to_i, edges: match[2].to_i,
                       covered_edges: match[1].to_i)
        end.uniq
      end

      def initialize(functions)
        @functions = functions.sort_by { |function| [function.file, function.line] }
      end

      # "C: functions 2/8, edges 9/70".
      def summary
        covered = @functions.count { |function| function.covered_edges.positive? }
        edges = @functions.sum(&:edges)
        "C: functions #{covered}/#{@functions.size}, edges #{@functions.sum(&:covered_edges)}/#{edges}"
      end

      # The report's section: one row per function; +shown+ turns a path
      # into what the page shows.
      def html(shown)
        rows = @functions.map do |function|
          css = function.covered_edges.zero? ? "uncovered" : "covered"
          "<tr class=\"#{css}\"><td>#{CGI.escapeHTML(function.name)}</td>" \
            "<td>#{CGI.escapeHTML("#{shown.call(function.file)}:#{function.line}")}</td>" \
            "<td>#{function.covered_edges}/#{function.edges}</td></tr>"
        end
        "<h2>C extension functions</h2><p>#{CGI.escapeHTML(summary)} (libFuzzer's -print_coverage)</p>" \
          "<table class=\"files\" id=\"c-functions\"><tr><th>function</th><th>defined at</th><th>edges</th></tr>" \
          "#{rows.join}</table>"
      end
    end
  end
end

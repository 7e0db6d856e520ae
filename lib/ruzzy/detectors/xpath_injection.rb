# frozen_string_literal: true

module Ruzzy
  module Detectors
    # XPath injection: an XPath expression with the canary CANARY as a bare
    # name, outside its string literals: the input broke out of a literal
    # (`' or ruzzy or '`) or wrote a path where a value was expected, and
    # can now select any node of the document. Seen where REXML compiles
    # every expression (REXML::Parsers::XPathParser#parse: REXML::XPath's
    # first, match and each, Element#elements[], get_elements and
    # each_element). Variables (REXML::XPath.first(doc, "//u[@name=$name]",
    # nil, "name" => input)) never appear in the expression's text.
    class XPathInjection < Report
      NAME = :xpath_injection
      SUMMARY = "XPath expressions with input outside their string literals (REXML)"

      # The canary out of a string literal of either quote, or after a value.
      WORDS = ["' or #{CANARY} or '", "\" or #{CANARY} or \"", " or #{CANARY}", CANARY].freeze

      # XPath's string literals (no escapes in XPath 1.0).
      QUOTED = /'[^']*'|"[^"]*"/

      class << self
        def install
          return unless defined?(REXML::Parsers::XPathParser)

          Detectors.hook(REXML::Parsers::XPathParser, "REXML::Parsers::XPathParser#", %i[parse], lambda { |sink, args|
                                                                                                   check(sink, args[0])
                                                                                                 })
        end

        # Checks the expression +path+ before +sink+ compiles it.
        def check(sink, path)
          return unless path.is_a?(String)

          Detectors.guide(path, WORDS)
          return unless Detectors.bare_canary?(path, QUOTED)

          Detectors.report(new("XPath injection: #{sink} got the expression #{path.inspect}, where the input wrote " \
                               "XPath (#{CANARY} outside any literal)", sink))
        end
      end
    end
  end
end

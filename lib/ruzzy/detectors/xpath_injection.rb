# frozen_string_literal: true

require_relative "report"

module Ruzzy
  module Detectors
    # XPath injection: an XPath expression with the canary CANARY as a bare
    # name, outside its string literals: the input broke out of a literal
    # (`' or ruzzy or '`) or wrote a path where a value was expected, and
    # can now select any node of the document. Seen where REXML compiles
    # every expression (REXML::Parsers::XPathParser#parse: REXML::XPath's
    # first, match and each, Element#elements[], get_elements and
    # each_element) and where Nokogiri takes one (Nokogiri::XML::Searchable's
    # xpath and at_xpath, and search and at given XPath, on documents,
    # nodes and node sets). Variables (REXML::XPath.first(doc,
    # "//u[@name=$name]", nil, "name" => input); Nokogiri's
    # doc.xpath("//u[@name=$name]", nil, "name" => input)) never appear in
    # the expression's text. CSS selectors are not XPath: not checked.
    class XPathInjection < Report
      NAME = :xpath_injection
      SUMMARY = "XPath expressions with input outside their string literals (REXML, Nokogiri)"

      WORDS = QUERY_WORDS
      LANGUAGE = "XPath"
      TEXT = "expression"
      INJECTED = "wrote XPath (#{CANARY} outside any literal)".freeze

      # XPath's string literals (no escapes in XPath 1.0).
      QUOTED = /'[^']*'|"[^"]*"/

      class << self
        def install
          if defined?(REXML::Parsers::XPathParser)
            Detectors.hook(REXML::Parsers::XPathParser, "REXML::Parsers::XPathParser#", %i[parse],
                           ->(sink, args) { Detectors.check_query(self, sink, args[0]) })
          end
          install_nokogiri if defined?(Nokogiri::XML::Searchable)
        end

        # Whether the input wrote XPath into +path+.
        def injected?(path)
          Detectors.bare_canary?(path, QUOTED)
        end

        private

        # Nokogiri's xpath and at_xpath take XPath only; search and at
        # take XPath and CSS, told apart by Nokogiri's own pattern.
        def install_nokogiri
          xpath = Nokogiri::XML::Searchable::LOOKS_LIKE_XPATH
          Detectors.hook(Nokogiri::XML::Searchable, "Nokogiri::XML::Searchable#", %i[xpath at_xpath],
                         ->(sink, args) { args.each { |arg| Detectors.check_query(self, sink, arg) } })
          Detectors.hook(Nokogiri::XML::Searchable, "Nokogiri::XML::Searchable#", %i[search at], lambda { |sink, args|
            args.each { |arg| Detectors.check_query(self, sink, arg) if arg.is_a?(String) && arg.match?(xpath) }
          })
        end
      end
    end
  end
end

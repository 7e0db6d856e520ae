# frozen_string_literal: true

require_relative "report"

module Ruzzy
  module Detectors
    # XML external entities: a document parsed by Nokogiri (libxml2) with
    # entity loading on (ParseOptions NOENT, DTDLOAD, DTDATTR or DTDVALID),
    # in which libxml2 loaded an external entity or DTD the input declared:
    # the canary SYSTEM "/ruzzy" (a file no system has, so nothing is
    # read). Such a parser reads any file or URL a document names into the
    # result. Seen after Nokogiri::XML::Document.read_memory and read_io
    # (Nokogiri::XML, Nokogiri::XML::Document.parse), from the warning
    # libxml2 leaves in the document's errors. Nokogiri's defaults load
    # nothing: nothing to find.
    class XXE < Report
      NAME = :xxe
      SUMMARY = "XML parsed with external entities on, loading one the input declared (Nokogiri)"

      # The canary entity, and where it points.
      SYSTEM_ID = "/#{CANARY}".freeze
      WORDS = [%(<!DOCTYPE r [<!ENTITY #{CANARY} SYSTEM "#{SYSTEM_ID}">]><r>&#{CANARY};</r>),
               %(<!DOCTYPE r SYSTEM "#{SYSTEM_ID}"><r/>)].freeze

      # libxml2's warning when it tried the canary (2.9: "failed to load
      # external entity", 2.14 and later: "failed to load").
      LOADED = /failed to load (?:external entity )?"#{SYSTEM_ID}"/

      # The parse options names that make libxml2 load external entities or
      # DTDs.
      LOADING_OPTIONS = %i[NOENT DTDLOAD DTDATTR DTDVALID].freeze

      class << self
        def install
          return unless defined?(Nokogiri::XML::Document)

          @loading = LOADING_OPTIONS.to_h { |name| [name, Nokogiri::XML::ParseOptions.const_get(name)] }
          @loading_mask = @loading.values.reduce(:|)
          hooks = Module.new
          %i[read_memory read_io].each do |name|
            sink = "Nokogiri::XML::Document.#{name}"
            hooks.define_method(name) do |source, url, encoding, options, &block|
              XXE.before(source, options)
              XXE.after(sink, source, options, super(source, url, encoding, options, &block))
            end
          end
          Nokogiri::XML::Document.singleton_class.prepend(hooks)
        end

        # Guides +source+ (a String; an IO cannot be) towards the canary
        # when +options+ load entities.
        def before(source, options)
          Detectors.guide(source, WORDS) if loading?(options)
        end

        # Reports +document+, parsed from +source+ with +options+ by
        # +sink+, if libxml2 loaded the canary; returns it otherwise.
        def after(sink, source, options, document)
          return document unless loading?(options) && document.errors.any? { |error| loaded?(error) }

          what = source.is_a?(String) ? Detectors.shown(source) : "a document"
          Detectors.report(new("XML external entity: #{sink} parsed #{what} with #{loading(options).join(", ")} " \
                               "on, and libxml2 loaded the external entity #{SYSTEM_ID.inspect} the input declared",
                               sink))
        end

        private

        # Whether libxml2's +error+ says it tried the canary (its message
        # may quote bytes invalid in its encoding: read as bytes).
        def loaded?(error)
          error.message.b.match?(LOADED)
        end

        # Whether +options+ has an entity-loading option (allocates nothing:
        # called on every parse).
        def loading?(options)
          options.is_a?(Integer) && options.anybits?(@loading_mask)
        end

        # The names of the entity-loading options +options+ has (for the
        # report only).
        def loading(options)
          @loading.filter_map { |name, bit| name if options.anybits?(bit) }
        end
      end
    end
  end
end

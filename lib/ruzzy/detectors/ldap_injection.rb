# frozen_string_literal: true

require_relative "report"

module Ruzzy
  module Detectors
    # LDAP filter injection: a search filter in which CANARY is an
    # attribute, `(ruzzy=...)`: the input closed the program's filter and
    # opened one of its own (`*)(ruzzy=*`), so it chooses what the search
    # matches. Seen where net-ldap parses every filter given as text
    # (Net::LDAP::Filter.construct and from_rfc2254, which
    # Net::LDAP#search(filter: String) uses). Input escaped with
    # Net::LDAP::Filter.escape, or built with Net::LDAP::Filter.eq and
    # friends, cannot open a filter.
    class LDAPInjection < Report
      NAME = :ldap_injection
      SUMMARY = "LDAP search filters with a filter the input opened (net-ldap)"

      # The canary as a filter of the input's own, after a value or a
      # wildcard.
      WORDS = ["*)(#{CANARY}=*", ")(#{CANARY}=*", "*))(|(#{CANARY}=*"].freeze
      LANGUAGE = "LDAP"
      TEXT = "filter"
      INJECTED = "opened a filter of its own (#{CANARY} as an attribute)".freeze

      # The canary in an attribute's place: right after "(".
      ATTRIBUTE = /\(\s*#{CANARY}\s*(?:[~<>]?=|:)/i

      class << self
        def install
          return unless defined?(Net::LDAP::Filter)

          Detectors.hook(Net::LDAP::Filter.singleton_class, "Net::LDAP::Filter.", %i[construct from_rfc2254],
                         ->(sink, args) { Detectors.check_query(self, sink, args[0]) })
        end

        # Whether the input opened a filter in +text+.
        def injected?(text)
          text.match?(ATTRIBUTE)
        end
      end
    end
  end
end

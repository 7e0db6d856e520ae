# frozen_string_literal: true

# A typed harness for net-ldap (Debian's ruby-net-ldap): an equality
# filter built from any attribute and any value, escaped as the library
# says to, must read back as the same filter.
#
#   ruzzy examples/typed/ldap_filter.rb -max_total_time=60
#
# Finds that Net::LDAP::Filter.construct rejects filters Filter.eq built:
# the empty value "(cn=)" and values with characters RFC 4515 does not
# escape, such as "(cn=|)". docs/typed-fuzz-tests.md walks through it.
require "ruzzy"
require "net/ldap"

G = Ruzzy::Gen

Ruzzy.fuzz(lambda { |attribute, value|
  filter = Net::LDAP::Filter.eq(attribute, Net::LDAP::Filter.escape(value))
  parsed = Net::LDAP::Filter.construct(filter.to_s)
  raise "#{filter} read back as #{parsed}" unless parsed == filter
}, G.from(%w[cn uid mail objectClass]), G.string(max_length: 16))

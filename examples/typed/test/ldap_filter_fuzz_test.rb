# frozen_string_literal: true

# The same property as a Minitest fuzz test:
#
#   ruby examples/typed/test/ldap_filter_fuzz_test.rb             # replays test/fuzz/*/
#   ruzzy run-test examples/typed/test/ldap_filter_fuzz_test.rb "filters read back" -max_total_time=60
#
# A finding is saved as test/fuzz/filters_read_back/finding-<sha1>, a
# `ruzzy fuzz v1` file, which the next ordinary run replays.
require "minitest/autorun"
require "ruzzy/minitest"
require "net/ldap"

# An equality filter, written and read back by net-ldap, is the same filter.
class LdapFilterFuzzTest < Minitest::Test
  G = Ruzzy::Gen

  fuzz_test "filters read back", G.from(%w[cn uid mail objectClass]), G.string(max_length: 16) do |attribute, value|
    filter = Net::LDAP::Filter.eq(attribute, Net::LDAP::Filter.escape(value))
    assert_equal filter, Net::LDAP::Filter.construct(filter.to_s)
  end
end

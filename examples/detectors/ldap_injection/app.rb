# frozen_string_literal: true

require "net/ldap"

# A people directory searched with LDAP filters, as an app does against
# its LDAP server (here the entries are in memory and Net::LDAP::Filter
# matches them, so no server is needed).
module People
  ENTRIES = [%w[alice staff], %w[bob staff], %w[root admins]].map do |uid, group|
    Net::LDAP::Entry.new("uid=#{uid},ou=people,dc=example,dc=org").tap do |entry|
      entry[:uid] = uid
      entry[:objectclass] = "person"
      entry[:memberof] = group
    end
  end

  # Vulnerable: the name is pasted into the filter; ")(" in it closes the
  # program's filter and opens one of the input's own.
  def self.staff(name)
    search("(&(objectClass=person)(memberOf=staff)(uid=#{name}))")
  end

  # Safe: the name is escaped, so it can only ever be a value.
  def self.staff_safely(name)
    search("(&(objectClass=person)(memberOf=staff)(uid=#{Net::LDAP::Filter.escape(name)}))")
  end

  def self.search(text)
    filter = Net::LDAP::Filter.construct(text)
    ENTRIES.select { |entry| filter.match(entry) }.map { |entry| entry[:uid].first }
  rescue Net::LDAP::FilterSyntaxInvalidError, Net::LDAP::Error, ArgumentError, NoMethodError
    []
  end
end

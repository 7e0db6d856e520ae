# frozen_string_literal: true

require "rexml/document"

# Users kept in an XML document: looks a user's email up by name and
# password, as a login form over an XML store does.
module UserStore
  DOCUMENT = REXML::Document.new(<<~XML)
    <users>
      <user name="alice" password="s3cret" role="admin"><email>alice@example.org</email></user>
      <user name="bob" password="hunter2" role="user"><email>bob@example.org</email></user>
    </users>
  XML

  # Vulnerable: the name is pasted into the expression; a quote in it ends
  # the literal, and "' or '1'='1" logs in as anyone.
  def self.email(name, password)
    REXML::XPath.first(DOCUMENT, "//user[@name='#{name}' and @password='#{password}']/email")&.text
  rescue StandardError # REXML raises several kinds on a malformed expression
    nil
  end

  # Safe: the name and password are XPath variables.
  def self.email_safely(name, password)
    REXML::XPath.first(DOCUMENT, "//user[@name=$name and @password=$password]/email", nil,
                       { "name" => name, "password" => password })&.text
  end
end

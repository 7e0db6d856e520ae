# frozen_string_literal: true

require "nokogiri"

# Imports orders uploaded as XML: reads the customer and the total.
module OrderImport
  Order = Struct.new(:customer, :total)

  # Vulnerable: entities are substituted (NOENT), external ones included,
  # so `<!ENTITY x SYSTEM "/etc/passwd">` and `&x;` put any file of the
  # server into the order.
  def self.read(xml)
    order(Nokogiri::XML(xml, nil, nil, Nokogiri::XML::ParseOptions::DEFAULT_XML | Nokogiri::XML::ParseOptions::NOENT))
  rescue Nokogiri::XML::SyntaxError # not XML at all
    nil
  end

  # Safe: Nokogiri's defaults never load an external entity.
  def self.read_safely(xml)
    order(Nokogiri::XML(xml))
  rescue Nokogiri::XML::SyntaxError
    nil
  end

  def self.order(document)
    Order.new(document.at_xpath("/order/customer")&.text, document.at_xpath("/order/total")&.text.to_f)
  end
end

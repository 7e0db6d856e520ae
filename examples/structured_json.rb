# frozen_string_literal: true

# Structure-aware fuzzing: the custom mutator decodes the input as JSON,
# changes one value (with libFuzzer's own mutator for strings and numbers),
# and encodes it again, so every input the target sees is a well-formed
# document and the fuzzer explores what the documents mean, not the syntax.
#
#   ruzzy examples/structured_json.rb -seed=1
#
# finds an order whose discount makes the total negative.

require "json"
require "ruzzy"

# The code under test: totals an order.
module Orders
  def self.total(order)
    items = order.fetch("items", [])
    sum = items.sum { |item| item.fetch("price", 0).to_i * item.fetch("quantity", 1).to_i }
    discount = order.fetch("discount", 0).to_i
    total = sum - discount
    raise "negative total #{total} for #{order.inspect}" if total.negative? && order["coupon"] == "VIP"

    total
  end
end

SEED_ORDER = { "items" => [{ "price" => 10, "quantity" => 1 }], "discount" => 0, "coupon" => "" }.freeze

# Mutates one value of the decoded document.
def mutate_value(value, max_size, random)
  case value
  when Integer then value + random.rand(-1000..1000)
  when String then Ruzzy.mutate(value.b, [max_size, 16].min).force_encoding(Encoding::UTF_8).scrub
  when Array then value.empty? || random.rand(4).zero? ? value + [{ "price" => 1, "quantity" => 1 }] : value
  else value
  end
end

mutator = lambda do |data, max_size, seed|
  random = Random.new(seed)
  order = begin
    JSON.parse(data)
  rescue JSON::ParserError
    nil
  end
  order = SEED_ORDER.dup unless order.is_a?(Hash)
  key = (SEED_ORDER.keys | order.keys).sample(random:)
  order[key] = mutate_value(order.fetch(key, SEED_ORDER[key]), max_size, random)
  JSON.generate(order).byteslice(0, max_size)
end

Ruzzy.fuzz(lambda do |data|
  order = JSON.parse(data)
  Orders.total(order) if order.is_a?(Hash)
  nil
rescue JSON::ParserError, KeyError, NoMethodError, TypeError
  nil # malformed documents are not what this harness is about
end, mutator:)

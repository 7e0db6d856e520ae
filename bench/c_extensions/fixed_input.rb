# frozen_string_literal: true

# A harness that does the same work on every execution, whatever the input:
# one call into the gem BENCH_REQUIRE (from BENCH_LIB) on a fixed document.
# Runs under ruzzy and under Ruzzy 0.8 alike (bench/run.rb c_extensions).

$LOAD_PATH.unshift(ENV.fetch("BENCH_LIB"))
require "json"
require "ruzzy"
feature = ENV.fetch("BENCH_REQUIRE")
require feature

RECORDS = Array.new(60) do |i|
  { "id" => i, "name" => "record #{i}", "tags" => %w[alpha beta gamma].rotate(i), "score" => i * 1.25,
    "active" => i.even?, "owner" => { "login" => "user#{i}", "url" => "https://example.org/u/#{i}" } }
end
JSON_DOC = JSON.generate(RECORDS).freeze
CBOR_DOC = feature == "cbor" ? CBOR.encode(RECORDS).freeze : nil
BSON_DOC = feature == "bson" ? { "records" => RECORDS }.to_bson.to_s.freeze : nil
RUBY_SOURCE = (File.read(__FILE__) * 4)
MARKDOWN = Array.new(20) do |i|
  "## Section #{i}\n\nSome *emphasis*, **strong** text, `code` and a [link](https://example.org/#{i}).\n\n" \
    "- item one\n- item two with _more_ words\n\n| a | b |\n|---|---|\n| #{i} | #{i * 2} |\n\n" \
    "```ruby\nputs #{i}\n```\n\n> quoted #{i}\n\n"
end.join.freeze

CALLS = {
  "oj" => -> { Oj.load(JSON_DOC) },
  "cbor" => -> { CBOR.decode(CBOR_DOC) },
  "commonmarker" => -> { CommonMarker.render_html(MARKDOWN, :DEFAULT, %i[table]) },
  "prism" => -> { Prism.parse(RUBY_SOURCE) },
  "bson" => -> { Hash.from_bson(BSON::ByteBuffer.new(BSON_DOC)) },
  "linguist/linguist" => -> { Linguist::Tokenizer.new.extract_tokens(RUBY_SOURCE) }
}.freeze

call = CALLS.fetch(feature)
Ruzzy.fuzz(lambda do |_data|
  call.call
  nil
end)

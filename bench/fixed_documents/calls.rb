# frozen_string_literal: true

# The fixed-document workloads of bench/run.rb's fixed_documents section,
# shared by harness.rb (under a fuzzer) and ruby_coverage.rb (under Ruby's
# own coverage, no fuzzer).
module FixedDocuments
  # What each parser does per execution: a lambda that loads what the
  # parser needs (called after coverage started, so that it is
  # instrumented) and returns the work of one execution.
  CALLS = {
    "uri" => lambda do
      require "uri"
      doc = "https://user:secret@Example.ORG:8080/a/./b/../c/%7Euser/index.html?q=fuzz&lang=en#Section-2"
      -> { URI.parse(doc).normalize }
    end,
    "csv" => lambda do
      require "csv"
      doc = "id,name,note\n1,alpha,\"quoted, with comma\"\n2,beta,\"with \"\"quotes\"\"\"\n3,gamma,plain\n" * 3
      -> { CSV.parse(doc) }
    end,
    "ipaddr" => lambda do
      require "ipaddr"
      -> { [IPAddr.new("192.168.17.42/20").to_range, IPAddr.new("2001:db8:85a3::8a2e:370:7334/64").to_range] }
    end,
    "time" => lambda do
      require "time"
      -> { [Time.parse("2024-02-29 13:45:07.250 +05:30").iso8601(3), Time.iso8601("2023-11-05T01:30:00Z")] }
    end,
    "rexml" => lambda do
      require "rexml/document"
      doc = "<?xml version='1.0'?><catalog><!-- items --><item id='1' kind=\"book\"><title>Ruby &amp; You" \
            "</title><price>12.50</price></item><item id='2'><title><![CDATA[<raw>]]></title></item></catalog>"
      -> { REXML::Document.new(doc) }
    end,
    "psych" => lambda do
      require "psych"
      doc = "name: ruzzy\nversion: 1.0\ntags: [fuzzing, ruby, libFuzzer]\nnested:\n  list:\n    - 1\n    - two\n    " \
            "- 3.5\n  map: {a: 1, b: true, c: ~}\ntext: |\n  multi\n  line\n"
      -> { Psych.safe_load(doc) }
    end
  }.freeze
end

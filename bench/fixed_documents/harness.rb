# frozen_string_literal: true

# A harness that does the same work on every execution, whatever the input:
# one standard-library parser (BENCH_PARSER) on a fixed document, so that
# every fuzzer and configuration measured runs exactly the same Ruby code.
# BENCH_PARSER=hundred_ifs runs bench/targets/hundred_ifs.rb's 100 `if`s on
# the input instead. Runs under ruzzy and under Ruzzy 0.8 alike (through
# tracer.rb, or with `ruzzy` directly); see bench/run.rb fixed_documents.

require "ruzzy"

PARSER = ENV.fetch("BENCH_PARSER")

# What each parser does per execution, and what it needs loaded (required
# here, after coverage started, so that it is instrumented).
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

if PARSER == "hundred_ifs"
  require_relative "../targets/hundred_ifs"
  Ruzzy.fuzz(lambda do |data|
    HundredIfs.run(data)
    nil
  end)
else
  call = CALLS.fetch(PARSER).call
  Ruzzy.fuzz(lambda do |_data|
    call.call
    nil
  end)
end

# frozen_string_literal: true

# Differential fuzz target: ruzzy's model of Ruby regular expressions
# (ext/ruzzy/src/feedback/regex_model.rs) against Ruby's own Regexp (Onigmo).
# The model only guides the fuzzer, so it may be coarser than Onigmo but
# never stricter: whenever Regexp#match? finds a match, in the input's
# subject or in the string the model itself proposes for the pattern, the
# model matches too. A pattern the model holds only in part (a truncated
# model, which stands for a prefix of the first alternative) is not
# compared. A model that panics on some source ends the run as an internal
# error.
#
#   RUZZY_TEST_PROBES=1 ruzzy test/fuzz_targets/regexp_model.rb -seed=1 -runs=100000
#
# The pattern comes from the input, either as raw source or assembled from
# pieces of Ruby's regexp syntax; the subject is the rest of the input, as
# ASCII, as is the model's proposal when it is compared: the model reads
# bytes, so on other text a class matches one byte where Ruby matches one
# character (see the model's header).

require "ruzzy"
require "timeout"

module RegexpModelTarget
  ATOMS = [
    "a", "b", "ab", "xyz", "A", ".", "\\d", "\\w", "\\s", "\\h", "\\D", "\\W", "\\S", "\\H", "\\R", "\\X",
    "[abc]", "[^a]", "[a-z]", "[^a-c\\d]", "[[:alpha:]]", "[[:^digit:]]", "[a-z&&[^aeiou]]", "[\\]\\-]",
    "\\A", "\\z", "\\Z", "^", "$", "\\b", "\\B", "\\G", "\\n", "\\t", "\\x41", "\\101", "\\u00e9", "\\p{Alpha}",
    "\\P{Digit}", "\\.", "\\*", "\\\\", "é", " ", "\\e", "\\cA", "\\K", "\\1"
  ].freeze
  QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "{,2}", "*?", "+?", "??", "*+", "++", "{0}"].freeze
  GROUPS = ["(%s)", "(?:%s)", "(?<n>%s)", "(?i:%s)", "(?-i:%s)", "(?m:%s)", "(?=%s)", "(?!%s)", "(?<=%s)",
            "(?<!%s)", "(?>%s)", "(%s|%s)", "(?:%s|%s|)", "(?x:%s )"].freeze
  OPTIONS = [0, Regexp::IGNORECASE, Regexp::MULTILINE, Regexp::EXTENDED, Regexp::IGNORECASE | Regexp::MULTILINE].freeze
  # Short subjects keep Ruby's own backtracking bounded where it has no
  # Regexp.timeout (3.1).
  SUBJECT_LIMIT = 16
  # Longest a match may take before it is left uncompared.
  MATCH_SECONDS = 0.1

  module_function

  # A pattern's source from the provider: pieces, some grouped.
  def assemble(data)
    pieces = Array.new(data.consume_int_in_range(1, 6)) do
      atom = data.pick_value_in_list(ATOMS)
      atom = format(data.pick_value_in_list(GROUPS), atom, data.pick_value_in_list(ATOMS)) if data.consume_bool
      atom + data.pick_value_in_list(QUANTIFIERS)
    end
    pieces.join
  end

  def regexp(data)
    source = if data.consume_bool
               data.consume_random_length_string(24)
             else
               assemble(data)
             end
    source = source.dup.force_encoding(Encoding::UTF_8).scrub
    Regexp.new(source, data.pick_value_in_list(OPTIONS)) unless named_reference?(source)
  rescue RegexpError
    nil
  end

  # Whether +source+ may hold a named reference (\k<name>, \g<name>):
  # Ruby 3.4 (3.4.11 at least) frees memory twice compiling some of them,
  # and the process aborts, e.g. `Regexp.new('(?:|\k<n>)*')` and
  # `Regexp.new('(a|\k<n>)(?<n>\k<n>){2,}')`. They are left out before
  # Ruby sees them, on every Ruby alike; numbered backreferences stay.
  def named_reference?(source)
    source.include?("\\k") || source.include?("\\g")
  end

  def check(bytes)
    data = Ruzzy::FuzzedDataProvider.new(bytes)
    pattern = regexp(data) or return
    subject = data.consume_remaining_bytes.byteslice(0, SUBJECT_LIMIT).bytes.map { |byte| byte & 0x7f }.pack("U*")
    _, sample, = compare(pattern, subject, bytes.bytesize)
    compare(pattern, sample, 0) if sample&.ascii_only? && sample.bytesize <= SUBJECT_LIMIT
    nil
  end

  # Raises when Ruby finds a match in +subject+ that the model misses;
  # returns what the model said.
  def compare(pattern, subject, variant)
    model = Ruzzy::Native._probe_regexp_model(pattern, subject, variant)
    matches, _, truncated = model
    if matches == false && !truncated && ruby_matches?(pattern, subject)
      raise "the model misses a match: #{pattern.inspect} =~ #{subject.inspect}"
    end

    model
  end

  # Whether Ruby's Regexp matches +subject+; false when it cannot tell in
  # time (Regexp.timeout, or Timeout where Ruby has none: some patterns
  # never end on Ruby 3.1, such as /(?:)++a/ on a string without "a").
  def ruby_matches?(pattern, subject)
    return pattern.match?(subject) if Regexp.respond_to?(:timeout)

    Timeout.timeout(MATCH_SECONDS) { pattern.match?(subject) }
  rescue EncodingError, ArgumentError, RegexpError, Timeout::Error # Regexp::TimeoutError is a RegexpError
    false
  end
end

Regexp.timeout = RegexpModelTarget::MATCH_SECONDS if Regexp.respond_to?(:timeout=)
Ruzzy.fuzz(->(bytes) { RegexpModelTarget.check(bytes) }, detectors: false)

# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestSanitizers: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestSanitizersSearch < Minitest::Test
  def test_realistic_extension_bug_is_found_and_reproduces_alone
    in_tmpdir do |dir|
      FileUtils.cp_r(File.join(EXAMPLES, "record_decoder"), dir)
      example = File.join(dir, "record_decoder")
      built = ruzzy("build-ext", example)
      assert_exit 0, built
      result = ruzzy("--sanitizer=address", "fuzz_record_decoder.rb", "-seed=1", "-runs=#{runs(3_000_000)}",
                     chdir: example)
      assert_exit 77, result
      assert_match(/ERROR: AddressSanitizer: heap-buffer-overflow/, result.stderr)
      assert_match(/in decode_packed .*record_decoder\.c/, result.stderr)
      crash = artifacts(example).first
      replay = ruzzy("--sanitizer=address", "fuzz_record_decoder.rb", crash, chdir: example)
      assert_exit 77, replay
      assert_match(/heap-buffer-overflow/, replay.stderr)
    end
  end
end

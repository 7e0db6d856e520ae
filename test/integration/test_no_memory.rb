# frozen_string_literal: true

require_relative "../test_helper"

# A Ruby allocation that fails (NoMemoryError) where ruzzy's native code
# allocates: it never unwinds through Rust or libFuzzer frames, it is
# reported cleanly, and what was being used stays usable. Allocations are
# made to fail with the RUZZY_INJECT_NO_MEMORY test hook (ext/ruzzy/src/rb/mod.rs).
class TestNoMemory < Minitest::Test
  def inject(site)
    { "RUZZY_INJECT_NO_MEMORY" => site }
  end

  def test_data_provider_stays_usable_after_a_failed_allocation
    script = <<~RUBY
      require "ruzzy/fuzzed_data_provider"
      fdp = Ruzzy::FuzzedDataProvider.new("abcd")
      begin
        fdp.consume_bytes(2)
      rescue NoMemoryError => e
        puts e.message
      end
      p fdp.remaining_bytes, fdp.consume_uint(1), fdp.consume_bool
    RUBY
    result = ruby("-e", script, env: inject("string"))
    assert_exit 0, result
    assert_equal "failed to allocate memory (RUZZY_INJECT_NO_MEMORY)\n2\n100\ntrue\n", result.stdout

    result = ruby("-e", <<~RUBY, env: inject("integer"))
      require "ruzzy/fuzzed_data_provider"
      fdp = Ruzzy::FuzzedDataProvider.new("abcd")
      begin
        fdp.consume_int(2)
      rescue NoMemoryError => e
        p e.class
      end
      p fdp.consume_bytes(5)
    RUBY
    assert_exit 0, result
    assert_equal "NoMemoryError\n\"ab\"\n", result.stdout
  end

  def test_failed_input_allocation_is_reported_as_a_finding
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(data) { nil })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=10", chdir: dir, env: inject("input"))
      assert_exit 77, result
      assert_match(/NoMemoryError: failed to allocate memory/, result.stderr)
      assert_equal 1, artifacts(dir).size
    end
  end

  # The mutator's arguments ("mutator") and Ruzzy.mutate's result ("string").
  def test_failed_allocation_around_a_custom_mutator_is_a_harness_error
    %w[mutator string].each do |site|
      in_tmpdir do |dir|
        write_harness(dir, "Ruzzy.fuzz(->(_) {}, mutator: ->(d, m, _s) { Ruzzy.mutate(d, m) })")
        result = ruzzy("harness.rb", "-seed=1", "-runs=100", chdir: dir, env: inject(site))
        assert_exit 2, result
        assert_match(/the custom mutator raised; it must return the new input as a String/, result.stderr)
        assert_match(/NoMemoryError: failed to allocate memory/, result.stderr)
        refute_match(/panic|\[BUG\]|deadly signal/, result.stderr)
      end
    end
  end
end

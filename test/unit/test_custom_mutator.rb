# frozen_string_literal: true

require_relative "../test_helper"

# Custom mutators and crossover written in Ruby.
class TestCustomMutator < Minitest::Test
  def test_the_target_receives_what_the_mutator_returns
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(lambda do |data|
          raise "got \#{data}" if data.start_with?("MUTATED")
        end, mutator: lambda { |data, max_size, seed|
          raise "max_size \#{max_size.inspect}" unless max_size.is_a?(Integer) && max_size.positive?
          (seed % 50) == 7 ? "MUTATED \#{seed}" : Ruzzy.mutate(data, max_size)
        })
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(200_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/INFO: found LLVMFuzzerCustomMutator/, result.stderr)
      seed = result.stderr[/RuntimeError: got MUTATED (\d+)/, 1]
      refute_nil seed, result.stderr
      assert_equal 7, Integer(seed) % 50
      assert_equal "MUTATED #{seed}", File.binread(File.join(dir, artifacts(dir).first))
    end
  end

  def test_a_mutator_that_raises_is_a_harness_error
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_) {}, mutator: ->(_d, _m, _s) { raise IOError, 'mutator bug' })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=100", chdir: dir)
      assert_exit 2, result
      assert_match(/ERROR: ruzzy: the custom mutator raised; it must return the new input as a String/, result.stderr)
      assert_match(/IOError: mutator bug/, result.stderr)
      assert_empty artifacts(dir)
    end
  end

  def test_a_mutator_returning_a_non_string_is_a_harness_error
    in_tmpdir do |dir|
      write_harness(dir, "Ruzzy.fuzz(->(_) {}, mutator: ->(_d, _m, _s) { 42 })")
      result = ruzzy("harness.rb", "-seed=1", "-runs=100", chdir: dir)
      assert_exit 2, result
      assert_match(/the custom mutator returned a non-String.*\n42 \(Integer\)/, result.stderr)
    end
  end

  def test_bad_mutator_arguments
    result = ruby("-rruzzy", "-e", "Ruzzy.fuzz(->(_) {}, ['x', '-runs=1'], mutator: 5)")
    assert_exit 1, result
    assert_match(/mutator: must respond to #call, got 5 \(ArgumentError\)/, result.stderr)
    outside = ruby("-rruzzy", "-e", "Ruzzy.mutate('abc', 10)")
    assert_match(/Ruzzy\.mutate works only inside a custom mutator/, outside.stderr)
  end

  # ruzzy's sanitizer preloads carry copies of the hooks that forward to
  # ruzzy_ext's (lib/ruzzy/sanitizers/preload_custom_mutator.c).
  def test_mutators_work_under_a_sanitizer_preload
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(->(data) { raise "got \#{data}" if data.start_with?("MUTATED") },
                   mutator: ->(data, max_size, seed) { (seed % 50) == 7 ? "MUTATED" : Ruzzy.mutate(data, max_size) })
      RUBY
      result = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(200_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: got MUTATED/, result.stderr)
    end
  end

  # A preloaded libFuzzer without ruzzy's copies of the hooks (here a stub
  # that only has the driver entry point): mutators are refused with a
  # message, typed inputs are mutated as bytes.
  def test_a_foreign_preloaded_libfuzzer_has_no_custom_mutator_hooks
    in_tmpdir do |dir|
      File.write(File.join(dir, "foreign.c"), "int LLVMFuzzerRunDriver(int *c, char ***v, void *f) { return 0; }\n")
      built = system("clang", "-shared", "-fPIC", "-o", File.join(dir, "foreign.so"), File.join(dir, "foreign.c"))
      prerequisite! built, "clang not found"
      env = { "LD_PRELOAD" => File.join(dir, "foreign.so") }
      write_harness(dir, "Ruzzy.fuzz(->(_) {}, mutator: ->(d, m, _s) { Ruzzy.mutate(d, m) })")
      refused = ruzzy("harness.rb", "-runs=10", chdir: dir, env:)
      assert_exit 1, refused
      assert_match(/this preloaded libFuzzer has no custom mutator hooks/, refused.stderr)
      write_harness(dir, format(TYPED_HARNESS, ""))
      typed = ruzzy("harness.rb", "-runs=10", chdir: dir, env:)
      assert_exit 0, typed
      assert_match(/INFO: ruzzy: typed inputs are mutated as bytes: this preloaded libFuzzer has no custom/,
                   typed.stderr)
    end
  end

  TYPED_HARNESS = <<~'RUBY'
    Ruzzy.fuzz(->(port, name) { raise "mine" if port == 1 && name == "mine" },
               Ruzzy::Gen.integer(0..9), Ruzzy::Gen.string(max_length: 4)%s)
  RUBY

  # Typed targets get the structure-aware mutator (libFuzzer reports the
  # custom hooks and names them in its mutation sequences); byte targets
  # keep libFuzzer's own mutations.
  def test_typed_targets_are_mutated_by_the_shape_of_their_arguments
    in_tmpdir do |dir|
      write_harness(dir, format(TYPED_HARNESS, ""))
      typed = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_match(/INFO: found LLVMFuzzerCustomMutator/, typed.stderr)
      assert_match(/MS: \d+ .*Custom-/, typed.stderr)
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.size })")
      bytes = ruzzy("harness.rb", "-seed=1", "-runs=1000", chdir: dir)
      assert_exit 0, bytes
      refute_match(/LLVMFuzzerCustomMutator/, bytes.stderr)
    end
  end

  def test_a_custom_mutator_replaces_the_structure_aware_one
    in_tmpdir do |dir|
      write_harness(dir, format(TYPED_HARNESS, ", mutator: ->(_d, _m, _s) { [1, 4, *\"mine\".bytes].pack(\"Q<C*\") }"))
      result = ruzzy("harness.rb", "-seed=1", "-runs=100", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: mine/, result.stderr)
    end
  end

  def test_typed_inputs_are_mutated_by_structure_under_a_sanitizer_preload
    prerequisite! sanitizers_built?, "sanitizer preloads not built (no clang at install)"
    in_tmpdir do |dir|
      write_harness(dir, format(TYPED_HARNESS, ""))
      typed = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_match(/INFO: found LLVMFuzzerCustomMutator/, typed.stderr)
      assert_match(/MS: \d+ .*Custom-/, typed.stderr)
      write_harness(dir, "Ruzzy.fuzz(->(data) { data.size })")
      bytes = ruzzy("--sanitizer=address", "harness.rb", "-seed=1", "-runs=1000", chdir: dir)
      assert_exit 0, bytes
      refute_match(/LLVMFuzzerCustomMutator/, bytes.stderr)
    end
  end
end

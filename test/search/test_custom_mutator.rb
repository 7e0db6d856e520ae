# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestCustomMutator: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestCustomMutatorSearch < Minitest::Test
  def test_crossover_combines_corpus_inputs
    in_tmpdir do |dir|
      corpus = File.join(dir, "corpus")
      FileUtils.mkdir_p(corpus)
      File.write(File.join(corpus, "a"), "CRO")
      File.write(File.join(corpus, "b"), "SS")
      write_harness(dir, <<~RUBY)
        Ruzzy.fuzz(->(data) { raise "crossed" if data == "CROSS" },
                   crossover: ->(a, b, max_size, _seed) { (a + b)[0, max_size] })
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(300_000)}", corpus, chdir: dir)
      assert_exit 77, result
      refute_match(/LLVMFuzzerCustomMutator/, result.stderr, "no mutator was asked for")
      assert_equal "CROSS", File.binread(File.join(dir, artifacts(dir).first))
    end
  end

  def test_structured_example_finds_its_bug
    in_tmpdir do |dir|
      result = ruzzy(File.join(EXAMPLES, "structured_json.rb"), "-seed=1", "-runs=#{runs(500_000)}", chdir: dir)
      assert_exit 77, result
      assert_match(/RuntimeError: negative total/, result.stderr)
      JSON.parse(File.read(File.join(dir, artifacts(dir).first)))
    end
  end
end

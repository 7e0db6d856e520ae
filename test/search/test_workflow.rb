# frozen_string_literal: true

require_relative "../test_helper"

# The search-budget tests of TestWorkflow: ruzzy must find these bugs
# within a fixed, seeded budget.
class TestWorkflowSearch < Minitest::Test
  def test_fork_mode_through_plain_ruby
    in_tmpdir do |dir|
      write_harness(dir, BRANCHY)
      result = ruby("harness.rb", "-fork=1", "-seed=1", "-max_total_time=60", chdir: dir)
      assert_exit 77, result
      assert_match(/KeyError: bad key/, result.stderr)
    end
  end

  def test_expected_exceptions_are_not_findings
    in_tmpdir do |dir|
      write_harness(dir, <<~RUBY)
        require "json"
        Ruzzy.fuzz(lambda do |data|
          JSON.parse(data)
          raise ArgumentError, "invalid thing" if data.start_with?("[1")
          raise ArgumentError, "real bug" if data.start_with?("[2")
          nil
        end, ignore: [JSON::ParserError, [ArgumentError, /invalid/]])
      RUBY
      result = ruzzy("harness.rb", "-seed=1", "-max_total_time=60", chdir: dir)
      assert_exit 77, result
      assert_match(/^ArgumentError: real bug$/, result.stderr)
      from_command_line = ruzzy("--ignore=JSON::ParserError", "--ignore=ArgumentError:/invalid|real/",
                                "harness.rb", "-seed=1", "-runs=#{runs(20_000)}", chdir: dir)
      assert_exit 0, from_command_line
    end
  end
end

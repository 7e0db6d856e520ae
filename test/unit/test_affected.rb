# frozen_string_literal: true

require_relative "../test_helper"
require_relative "../support/affected"

# bin/test --affected's choice of test files (test/support/affected.rb).
class TestAffected < Minitest::Test
  def test_a_file_is_tested_by_the_tests_named_after_it_or_its_folder
    assert_equal [["test/unit/test_quiet_coverage.rb"], "named after quiet"],
                 Affected.tests_for("ext/ruzzy/src/coverage/quiet.rs")
    assert_equal [["test/unit/test_detectors.rb"], "named after detectors"],
                 Affected.tests_for("lib/ruzzy/detectors/redos.rb")
  end

  def test_a_test_file_is_itself_and_a_file_nothing_names_gets_every_quick_test
    assert_equal [["test/search/test_detectors.rb"], "is a test file"],
                 Affected.tests_for("test/search/test_detectors.rb")
    files, why = Affected.tests_for("lib/ruzzy/#{"q" * 12}.rb") # a name no file holds, this one included
    assert_equal Affected.quick_tests, files
    assert_match(/every quick test/, why)
    assert_operator files.size, :>, 30
  end

  def test_otherwise_the_tests_that_mention_its_name
    files, why = Affected.tests_for("lib/ruzzy/libfuzzer_args.rb")
    assert_equal "mention libfuzzer_args", why
    files.each { |file| assert_match(/\blibfuzzer_args\b/i, File.read(file)) }
  end

  def test_rubocop_gets_the_changed_files_it_checks
    changed = %w[lib/ruzzy/gen.rb Rakefile Gemfile ruzzy.gemspec exe/ruzzy bin/test README.md
                 ext/ruzzy/src/lib.rs lib/ruzzy/3.1/ruzzy_ext.so]
    assert_equal %w[lib/ruzzy/gen.rb Rakefile Gemfile ruzzy.gemspec exe/ruzzy], Affected.ruby_files(changed)
  end
end

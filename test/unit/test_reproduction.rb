# frozen_string_literal: true

require_relative "../test_helper"
require "ruzzy/findings/reproduction"

# What a campaign records to run its harness again (campaign.json), the
# shell line `ruzzy findings show` prints from it, and the reports filed
# with a group's input.
class TestReproduction < Minitest::Test
  Reproduction = Ruzzy::Findings::Reproduction

  def reproduction(environment = { "GEM_PATH" => "/home/u/gems:/usr/lib/gems", "LD_PRELOAD" => nil })
    Reproduction.new(["/usr/bin/ruby", "-I", "lib", "/bin/ruzzy", "/src/my harness.rb"], "/src", environment)
  end

  def test_every_variable_is_recorded_set_or_not
    recorded = Reproduction.current(%w[ruby ruzzy harness.rb]).to_campaign
    assert_equal Reproduction::ENVIRONMENT, recorded["environment"].keys
    assert_equal ENV.fetch("GEM_HOME", "unset"), recorded.dig("environment", "GEM_HOME") || "unset"
    assert_equal Dir.pwd, recorded["directory"]
    assert_equal recorded, Reproduction.from_campaign(JSON.parse(JSON.generate(recorded))).to_campaign
  end

  def test_the_shell_line_carries_the_directory_and_the_environment
    assert_equal "cd /src && env GEM_PATH=/home/u/gems:/usr/lib/gems /usr/bin/ruby -I lib /bin/ruzzy " \
                 "/src/my\\ harness.rb /f/g/input",
                 reproduction.shell_line("/f/g/input", current: {})
    preloading = { "LD_PRELOAD" => "x" }
    assert_match(%r{\Acd /src && env -u LD_PRELOAD GEM_PATH=}, reproduction.shell_line(current: preloading),
                 "a variable the campaign ran without is unset")
    assert_equal "cd /src && /usr/bin/ruby -I lib /bin/ruzzy /src/my\\ harness.rb",
                 reproduction({}).shell_line(current: {})
  end

  def test_a_filed_report_names_the_groups_input_and_its_commands
    report = <<~TEXT
      ==1== ERROR: libFuzzer: deadly signal
      ==ruzzy== Reproduce: /usr/bin/ruby /bin/ruzzy /src/my\\ harness.rb /tmp/ruzzy-check1/input
      ==ruzzy== Minimise:  /usr/bin/ruby /bin/ruzzy -minimize_crash=1 /tmp/ruzzy-check1/input
      artifact_prefix='./'; Test unit written to /tmp/ruzzy-check1/input
    TEXT
    filed = reproduction.filed_report(report, from: "/tmp/ruzzy-check1/input", to: "/f/g/input",
                                              minimise: Reproduction.minimise_line("/f", "g"))
    refute_match(/ruzzy-check/, filed)
    assert_match(%r{^==ruzzy== Reproduce: cd /src && env GEM_PATH=\S+ /usr/bin/ruby .* /f/g/input$}, filed)
    assert_match(%r{^==ruzzy== Minimise:  ruzzy findings /f minimise g$}, filed)
    assert_match(%r{^artifact_prefix='\./'; Test unit written to /f/g/input$}, filed)
  end

  # A run of the input alone prints its start-up first; the report filed
  # starts where the run's report does, as one filed in-process.
  def test_a_filed_report_leaves_out_the_runs_start_up
    report = <<~TEXT
      INFO: ruzzy: 2048 edge counters for 65 lines and branch arms of instrumented code (--map-size=N to change)
      Dictionary: 42 entries
      INFO: Seed: 1880217517
      /usr/bin/ruby /bin/ruzzy h.rb: Running 1 inputs 1 time(s) each.
      Running: /tmp/ruzzy-check1/input
      ==1== ERROR: libFuzzer: deadly signal
      INFO: a line of the report
    TEXT
    filed = reproduction.filed_report(report, from: "/tmp/ruzzy-check1/input", to: "/f/g/input", minimise: "m")
    assert_equal "==1== ERROR: libFuzzer: deadly signal\nINFO: a line of the report\n", filed
  end

  # A campaign worker's artifacts directory is deleted once its artifacts
  # are filed: libFuzzer's line names the group's directory instead.
  def test_a_filed_report_names_no_artifacts_directory
    artifact = "/f/.artifacts/3/crash-0a1b"
    report = "artifact_prefix='/f/.artifacts/3/'; Test unit written to #{artifact}\n"
    filed = reproduction.filed_report(report, from: artifact, to: "/f/g/input", minimise: "m")
    assert_equal "artifact_prefix='/f/g/'; Test unit written to /f/g/input\n", filed
  end

  def test_a_run_that_never_reached_its_input_is_told_apart
    statuses = { 0 => true, 77 => true, 70 => true, 71 => true, 1 => false, 2 => false, 3 => false, 7 => false }
    statuses.each do |code, ran|
      _, status = Open3.capture2e(RbConfig.ruby, "-e", "exit #{code}")
      assert_equal ran, Reproduction.ran?(status), "exit #{code}"
    end
    _, killed = Open3.capture2e(RbConfig.ruby, "-e", "Process.kill(:SEGV, Process.pid)")
    assert Reproduction.ran?(killed), "a deadly signal is a finding"
    _, minimised = Open3.capture2e(RbConfig.ruby, "-e", "exit 1")
    assert Reproduction.ran?(minimised, "INFO: ...\nERROR: the input /f/g/input did not crash\n"),
           "-minimize_crash on an input that no longer fails ran it"
  end

  def test_a_campaign_whose_directory_is_gone_says_so
    gone = Reproduction.new([RbConfig.ruby, "-e", "exit 0"], "/nonexistent/campaign-dir", {})
    error = assert_raises(Ruzzy::ReproductionError) { gone.run("input") }
    assert_match(%r{ran in /nonexistent/campaign-dir, which no longer exists}, error.message)
    missing = Reproduction.new(["/nonexistent/ruby", "x.rb"], Dir.pwd, {})
    error = assert_raises(Ruzzy::ReproductionError) { missing.run("input") }
    assert_match(%r{cannot run: .*/nonexistent/ruby}, error.message)
  end
end

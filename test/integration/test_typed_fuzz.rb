# frozen_string_literal: true

require_relative "../test_helper"

# Typed fuzz targets (Ruzzy.fuzz with Ruzzy::Gen generators, fuzz_test with
# generators): values stay inside their contract, findings are shrunk and
# saved as `ruzzy fuzz v1` files that the next ordinary run replays,
# hand-written files included.
class TestTypedFuzz < Minitest::Test
  CONTRACT_HARNESS = <<~'RUBY'
    G = Ruzzy::Gen
    Ruzzy.fuzz(lambda { |port, name, list, ratio|
      raise "port #{port}" unless port.between?(1, 1023)
      raise "name #{name.inspect}" unless name.valid_encoding? && name.length <= 12
      raise "list #{list.inspect}" unless list.size <= 5 && list.all? { |item| %i[a b].include?(item) }
      raise "ratio #{ratio}" unless ratio.between?(0.0, 1.0)
    }, G.integer(1..1023), G.string(max_length: 12), G.array(G.from(%i[a b]), max_length: 5), G.float(0.0..1.0))
  RUBY

  def test_no_value_leaves_its_generators_contract
    in_tmpdir do |dir|
      write_harness(dir, CONTRACT_HARNESS)
      result = ruzzy("harness.rb", "-seed=1", "-runs=#{runs(200_000)}", chdir: dir)
      assert_exit 0, result
      assert_match(/Done \d+ runs/, result.stderr)
    end
  end

  def test_a_typed_finding_is_shrunk_and_printed_as_a_regression_file
    in_tmpdir do |dir|
      result = solve(dir, "typed_request", runs(3_000_000))
      assert_exit 77, result
      shrunk = %r{ruzzy: the arguments of this finding, shrunk in \d+ calls?:\nruzzy fuzz v1\n8080\n"/etc/"\ntrue\n}
      assert_match(shrunk, result.stderr)
      assert_match(%r{RuntimeError: reached /etc/ on port 8080}, result.stderr)
      crash = Dir[File.join(dir, "crash-*")].first
      refute_nil crash
      replayed = ruzzy(File.join(SOLVE, "typed_request.rb"), crash, chdir: dir)
      assert_exit 77, replayed
      assert_match(%r{RuntimeError: reached /etc/ on port 8080}, replayed.stderr)
    end
  end

  # docs/typed-fuzz-tests.md's first step: net-ldap writes "(cn=)" and
  # cannot read it back.
  def test_the_ldap_example_finds_a_filter_net_ldap_cannot_read_back
    in_tmpdir do |dir|
      result = ruzzy(File.join(EXAMPLES, "typed", "ldap_filter.rb"), "-seed=1", "-runs=1000", chdir: dir)
      assert_exit 77, result
      assert_match(/shrunk in \d+ calls?:\nruzzy fuzz v1\n"cn"\n""\n/, result.stderr)
      assert_match(/Net::LDAP::FilterSyntaxInvalidError: Invalid filter syntax/, result.stderr)
    end
  end

  def test_typed_targets_say_what_is_wrong_with_their_arguments
    in_tmpdir do |dir|
      {
        "Ruzzy.fuzz(->(a, b) { }, Ruzzy::Gen.integer)" => /the target takes 2 arguments, given 1 generator/,
        "Ruzzy.fuzz(->(a) { }, Ruzzy::Gen.integer, 5)" => /Ruzzy.fuzz takes Ruzzy::Gen generators, got 5/,
        "Ruzzy.fuzz(->(a) { }, [$0], [$0])" => /Ruzzy.fuzz takes the target, then libFuzzer's arguments \(one Array\)/
      }.each do |body, message|
        write_harness(dir, body)
        result = ruzzy("harness.rb", "-runs=10", chdir: dir)
        assert_exit 1, result
        assert_match message, result.stderr
        assert_match(/raised while loading, before fuzzing started:\nArgumentError: /, result.stderr)
      end
    end
  end

  TYPED_TEST = <<~'RUBY'
    require "minitest/autorun"
    require "ruzzy/minitest"

    Route = Struct.new(:port, :path)

    class RouterFuzzTest < Minitest::Test
      G = Ruzzy::Gen

      fuzz_test "routes any request", G.integer(0..65_535), G.string(max_length: 32), G.boolean do |port, path, verbose|
        raise ArgumentError, "secret route" if port == 8080 && path.start_with?("/etc/") && verbose
      end

      fuzz_test "builds routes", G.struct(Route, port: G.integer(0..65_535), path: G.string) do |route|
        assert_kind_of Route, route
        refute_equal "/forbidden", route.path
      end
    end
  RUBY

  def test_minitest_typed_finding_is_saved_as_literals_and_fails_the_next_run
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "test"))
      File.write(File.join(dir, "test", "router_test.rb"), TYPED_TEST)
      assert_exit 0, ruby("test/router_test.rb", chdir: dir)

      fuzzing = ruzzy("run-test", "test/router_test.rb", "routes any request", "-seed=1",
                      "-runs=#{runs(3_000_000)}", chdir: dir)
      assert_exit 77, fuzzing
      corpus = File.join(dir, "test", "fuzz", "routes_any_request")
      finding = Dir[File.join(corpus, "finding-*")].first
      refute_nil finding, fuzzing.stderr
      assert_equal "ruzzy fuzz v1\n8080\n\"/etc/\"\ntrue\n", File.read(finding)
      assert_match(/\(saved as .*finding-\h{16}\)/, fuzzing.stderr)
      refute_empty Dir[File.join(corpus, ".crash-*")], "libFuzzer's raw crash file, hidden from replay"

      after = ruby("test/router_test.rb", chdir: dir)
      assert_exit 1, after
      assert_match(/test_fuzz_routes_any_request__finding_\h{16}/, after.stdout)
      assert_match(/fuzz input .*finding-\h{16}: ArgumentError: secret route/, after.stdout)
      assert_match(/1 errors/, after.stdout)

      replayed = ruzzy("run-test", "test/router_test.rb", "routes any request", finding, chdir: dir)
      assert_exit 77, replayed
      assert_match(/ArgumentError: secret route/, replayed.stderr)
      assert_converts_both_ways(dir, Dir[File.join(corpus, ".crash-*")].first)
    end
  end

  # `ruzzy ci` goes on after each finding: a typed fuzz test still shrinks
  # and saves each bug once, as a regression file (a failed assertion too),
  # and ci copies no raw crash input beside it, so the next ordinary run
  # fails once per bug.
  def test_ci_saves_each_typed_bug_once_as_a_regression_file
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "test"))
      File.write(File.join(dir, "test", "router_test.rb"), TYPED_TEST)
      result = ruzzy("ci", "--seconds=600", "test/router_test.rb", "--", "-seed=1", "-runs=#{runs(1_000_000)}",
                     chdir: dir)
      assert_exit 77, result
      assert_match(/FOUND  builds routes .*: 1 bug\(s\), \d\d+ finding\(s\)/, result.stdout)
      saved = %w[routes_any_request builds_routes].to_h do |slug|
        corpus = File.join(dir, "test", "fuzz", slug)
        assert_empty Dir[File.join(corpus, "crash-*")], slug
        findings = Dir[File.join(corpus, "finding-*")]
        assert_equal 1, findings.size, "#{slug}: #{result.stdout}"
        [slug, File.read(findings.first)]
      end
      assert_equal "ruzzy fuzz v1\n8080\n\"/etc/\"\ntrue\n", saved["routes_any_request"]
      assert_equal "ruzzy fuzz v1\nRoute.new(port: 0, path: \"/forbidden\")\n", saved["builds_routes"]
      after = ruby("test/router_test.rb", chdir: dir)
      assert_match(/ 1 failures, 1 errors/, after.stdout)
    end
  end

  # `ruzzy convert`: libFuzzer's raw crash file as a regression file (its
  # values unshrunk), and that file back as the same bytes' values.
  def assert_converts_both_ways(dir, raw)
    out = File.join(dir, "converted")
    to_text = ruzzy("convert", "test/router_test.rb", "routes any request", raw, "--out=#{out}", chdir: dir)
    assert_exit 0, to_text
    text = to_text.stdout[/-> (.*input-\h{16})$/, 1]
    refute_nil text, to_text.stdout
    assert_match(%r{\Aruzzy fuzz v1\n8080\n"/etc/.*"\ntrue\n\z}, File.read(text))
    back = ruzzy("convert", "test/router_test.rb", "routes any request", text, "--out=#{out}/bytes", chdir: dir)
    assert_exit 0, back
    again = ruzzy("convert", "test/router_test.rb", "routes any request", back.stdout[/-> (.*)$/, 1],
                  "--out=#{out}/again", chdir: dir)
    assert_equal File.read(text), File.read(again.stdout[/-> (.*)$/, 1])
    untyped = ruzzy("convert", "test/router_test.rb", "nope", raw, chdir: dir)
    assert_exit 2, untyped
    assert_match(/no fuzz test named "nope"/, untyped.stderr)
  end

  def test_hand_written_regression_files_replay_and_bad_ones_say_where
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "test", "fuzz", "builds_routes"))
      File.write(File.join(dir, "test", "router_test.rb"), TYPED_TEST)
      corpus = File.join(dir, "test", "fuzz", "builds_routes")
      File.write(File.join(corpus, "ok"), "ruzzy fuzz v1\nRoute.new(port: 80, path: \"/index\\n\")\n")
      assert_exit 0, ruby("test/router_test.rb", "-n", "/builds_routes/", chdir: dir)

      File.write(File.join(corpus, "forbidden"), "ruzzy fuzz v1\n# the path a user reported\n" \
                                                 "Route.new(port: 443, path: \"/forbidden\")\n")
      File.write(File.join(corpus, "typo"), "ruzzy fuzz v1\nRoute.new(port: 80, path: \"/)\n")
      File.write(File.join(corpus, "range"), "ruzzy fuzz v1\nRoute.new(port: 65536, path: \"/\")\n")
      result = ruby("test/router_test.rb", "-n", "/builds_routes/", chdir: dir)
      assert_exit 1, result
      assert_match(%r{test_fuzz_builds_routes__forbidden.*Expected "/forbidden" to not be equal to "/forbidden"}m,
                   result.stdout)
      assert_match(%r{test/fuzz/builds_routes/typo:2:27: expected a closing " for this String}, result.stdout)
      assert_match(%r{builds_routes/range:2: Route.new\(port: 65536, path: "/"\) does not fit the generator of arg},
                   result.stdout)
      assert_match(/4 runs, .* 1 failures, 2 errors/, result.stdout)
    end
  end

  def test_rspec_typed_fuzz_test_replays_regression_files
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, "spec", "fuzz", "adds_small_numbers"))
      File.write(File.join(dir, "spec", "adder_spec.rb"), <<~'RUBY')
        require "ruzzy/rspec"
        RSpec.describe "adder" do
          fuzz_test "adds small numbers", Ruzzy::Gen.integer(0..100), Ruzzy::Gen.integer(0..100) do |a, b|
            expect(a + b).to be <= 150
          end
        end
      RUBY
      File.write(File.join(dir, "spec", "fuzz", "adds_small_numbers", "big"), "ruzzy fuzz v1\n100\n60\n")
      result = run_command("rspec", "spec", chdir: dir)
      assert_exit 1, result
      assert_match(/adds small numbers with big/, result.stdout)
      assert_match(/expected: <= 150\s+got:\s+160/, result.stdout)
    end
  end
end

# frozen_string_literal: true

# The example web apps (examples/web/) as their READMEs run them: each
# planted bug's request reported, the fixed app silent, a campaign from an
# empty corpus finding the planted bugs.
module WebExamples
  # Fuzzes an example web app (examples/web/) with its planted bugs fixed
  # (RUZZY_EXAMPLE_FIXED=1) for +count+ requests: it must end without a
  # finding, its INFO line matching +routes+.
  def assert_fixed_example_silent(app, count, routes)
    in_tmpdir do |dir|
      result = ruzzy("rack", app, "-seed=1", "-runs=#{runs(count)}", chdir: dir,
                                                                     env: { "RUZZY_EXAMPLE_FIXED" => "1" })
      assert_exit 0, result
      assert_match(routes, result.output)
      assert_match(/^Done #{runs(count)} runs in /, result.output)
      assert_empty artifacts(dir)
    end
  end

  # Sends each planted bug's request of an example web app (examples/web/)
  # through the harness +requests+ (its inputs are the names of +reports+):
  # each is reported as its Regexp in +reports+ says, and the same app with
  # its bugs fixed (RUZZY_EXAMPLE_FIXED=1) answers them all (one run)
  # without a finding.
  def assert_planted_requests_reported(app, requests, reports)
    in_tmpdir do |dir|
      write_harness(dir, requests)
      reports.each do |name, report|
        File.write(File.join(dir, name), name)
        found = ruzzy("harness.rb", name, chdir: dir, env: { "APP" => app })
        assert_exit 77, found
        assert_match report, found.stderr
      end
      fixed = ruzzy("harness.rb", *reports.keys, chdir: dir, env: { "APP" => app, "RUZZY_EXAMPLE_FIXED" => "1" })
      assert_exit 0, fixed
      assert_equal reports.keys.sort, fixed.output.scan(/^Executed (\S+) in /).flatten.sort, fixed.output
    end
  end

  # Runs campaign_until_found and asserts that it found each of +expected+;
  # a failure shows the NEW lines, every group on file with its title and
  # site, and the output's end. Returns the output.
  def assert_campaign_finds(dir, args, expected, seconds:, workers: 1)
    found, output = campaign_until_found(dir, args, expected, seconds:, workers:)
    return output if found == expected.keys

    groups = list_groups(dir).map do |group|
      "#{group[:name]} #{group[:findings]}x at #{group[:site]}: #{group[:title]}"
    end
    flunk "the campaign missed #{(expected.keys - found).join(", ")}\n--- NEW lines:\n" \
          "#{output.lines.grep(/NEW/).join}--- groups on file:\n#{groups.sort.join("\n")}\n" \
          "--- the output's end:\n#{output[-3000..] || output}"
  end

  # Runs a campaign of +workers+ from an empty corpus in +dir+
  # (`ruzzy --keep-going --workers=N ARGS -seed=1 -max_total_time=SECONDS`)
  # until it has printed a NEW line matching each of +expected+ (name =>
  # Regexp), then stops it as Ctrl-C does. Returns the names whose line
  # was printed, and the output.
  def campaign_until_found(dir, args, expected, seconds:, workers: 1)
    log = File.join(dir, "campaign.out")
    pid = spawn("ruzzy", "--keep-going", "--workers=#{workers}", *args, "-seed=1", "-max_total_time=#{seconds}",
                chdir: dir, %i[out err] => log)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds + 120
    signal = nil
    loop do
      ended = Process.wait(pid, Process::WNOHANG)
      output = File.binread(log).force_encoding(Encoding::UTF_8).scrub
      found = expected.keys.select { |name| output.match?(/^  NEW .*#{expected[name]}/) }
      return [found, output] if ended

      late = Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      wanted = if late then "KILL"
               elsif found.size == expected.size then "INT"
               end
      Process.kill(wanted, pid) if wanted && wanted != signal
      signal = wanted
      sleep 1
    end
  end
end

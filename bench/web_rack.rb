# frozen_string_literal: true

# What `ruzzy rack` costs a web application per request: the same fixed
# requests sent by a plain loop through Rack::MockRequest (no fuzzer), and
# replayed by `ruzzy rack` (libFuzzer's replay of input files: the request
# decoded from its input, coverage, comparison hooks, bug detectors, the
# database transaction rolled back; no mutation, no corpus work). The app
# is examples/web/rails unless another is given.
#
#   ruby bench/web_rack.rb [APP]
#
# As bench/run.rb, it runs the ruzzy on PATH and the Ruby library Ruby
# finds (the installed gem; PATH=exe:$PATH RUBYLIB=lib for a checkout's
# in-tree build).
#
# Each row is a command run twice, sending every request once and many
# times; the difference, divided by the extra requests, is the cost of one
# request, start-up left out. The cost is CPU time (user and system): the
# other work of a busy machine does not count, though it still slows what
# shares a core, so rounds are repeated. (Valgrind's instruction count, as
# bench/run.rb's instructions section uses, would not move with the
# machine's load, but booting Rails with coverage under callgrind takes
# longer than ten minutes a run.) Both sides decode the inputs and build
# each request's Rack environment; ruzzy decodes every input each time it
# runs it, the plain loop once.
#
# Environment: BENCH_WEB_INPUTS (how many requests, default 16),
# BENCH_WEB_REPEATS (times each request is sent beyond the short run,
# default 150), BENCH_WEB_ROUNDS (rounds, default 3: each row is the
# median of its rounds, the rows of one round run one after the other so
# that a busy machine slows them alike), BENCH_WEB_FLAGS (more ruzzy rows:
# sets of ruzzy's options separated by ";", such as
# "--no-compare-hooks;--no-coverage"), BENCH_WEB_CAMPAIGN_SECONDS (each
# campaign of the executions table, one worker and one per core; default
# 60, 0 for none).
# RUZZY_EXAMPLE_FIXED=1 measures the fixed example app.
#
# The requests: the first inputs of a seeded random stream that decode
# (Gen.request, the routes read from the app) into a request to one of the
# app's routes answered below 500, at most a quarter of them to one route,
# so the mix is what fuzzing sends (most of them answered 4xx) rather than
# a hand-picked happy path; the table lists them.

require "etc"
require "json"
require "open3"
require "rbconfig"
require "tmpdir"

module Bench
  # The web_rack benchmark: the parent runs the children below and prints
  # the table; `--inputs` and `--send` are the children.
  module WebRack
    ROOT = File.expand_path("..", __dir__)
    APP = File.join(ROOT, "examples", "web", "rails")
    INPUTS = Integer(ENV.fetch("BENCH_WEB_INPUTS", "16"))
    REPEATS = Integer(ENV.fetch("BENCH_WEB_REPEATS", "150"))
    ROUNDS = Integer(ENV.fetch("BENCH_WEB_ROUNDS", "3"))
    # Times each request is sent in the short run of a row.
    SHORT = 1
    SEED = 1
    # Seconds of each campaign of the executions table (0: no table).
    CAMPAIGN_SECONDS = Integer(ENV.fetch("BENCH_WEB_CAMPAIGN_SECONDS", "60"))

    # [label, how the requests are sent: :plain or :rolled_back (the child
    # --send), or ruzzy's options].
    ROWS = [
      ["Rack::MockRequest, no fuzzer", :plain],
      ["Rack::MockRequest, each in a rolled-back transaction", :rolled_back],
      ["`ruzzy --no-coverage --no-compare-hooks --disable-detectors=all rack`",
       %w[--no-coverage --no-compare-hooks --disable-detectors=all]],
      *ENV.fetch("BENCH_WEB_FLAGS", "").split(";").map(&:split).reject(&:empty?).map do |flags|
        ["`ruzzy #{flags.join(" ")} rack`", flags]
      end,
      ["`ruzzy rack` (defaults)", []]
    ].freeze

    module_function

    def fmt(number, digits = 0)
      whole, fraction = format("%.#{digits}f", number).split(".")
      whole = whole.reverse.scan(/\d{1,3}/).join(",").reverse
      fraction ? "#{whole}.#{fraction}" : whole
    end

    def median(values) = values.sort[values.size / 2]

    # Runs +command+; its output, or an abort with it when it failed.
    def run!(*command)
      output, status = Open3.capture2e(*command)
      return output if status.success?

      shown = output.lines.reject { |line| line.start_with?("    from ") }.last(40).join # backtraces left out
      abort "#{command.join(" ")} failed (#{status}):\n#{shown}"
    end

    # The command of one row sending each of the requests in +dir+ +times+
    # times.
    def command(how, app, dir, files, times)
      return [RbConfig.ruby, __FILE__, "--send", app, dir, times.to_s, how.to_s] if how.is_a?(Symbol)

      ["ruzzy", *how, "rack", app, "-runs=#{times}", *files]
    end

    # The CPU seconds of the processes +command+ ran. A ruzzy replay must
    # have run its +inputs+.
    def cost(command, inputs: nil)
      before = Process.times
      output = run!(*command)
      after = Process.times
      replayed = output.scan(/^Executed \S+ in \d+ ms$/).size
      abort "#{command.join(" ")} replayed #{replayed} inputs:\n#{output.lines.last(30).join}" \
        if inputs && replayed != inputs
      (after.cutime + after.cstime) - (before.cutime + before.cstime)
    end

    # The cost of one request in each row, one round.
    def round(app, dir, files)
      ROWS.to_h do |label, how|
        short, long = [SHORT, SHORT + REPEATS].map do |times|
          cost(command(how, app, dir, files, times), inputs: (files.size unless how.is_a?(Symbol)))
        end
        [label, (long - short).fdiv(REPEATS * files.size)]
      end
    end

    def main(app)
      Dir.mktmpdir("ruzzy-bench-web") do |dir|
        requests = JSON.parse(run!(RbConfig.ruby, __FILE__, "--inputs", app, dir, INPUTS.to_s))
        files = requests.map { |request| request["file"] }
        rounds = Array.new(ROUNDS) { round(app, dir, files) }
        print_table(app, requests, rounds)
      end
      WebCampaigns.table(app, CAMPAIGN_SECONDS) if CAMPAIGN_SECONDS.positive?
    end

    def print_table(app, requests, rounds)
      puts title(app, requests.size)
      puts "| how the requests are sent | requests per CPU second | CPU µs/request | over Rack::MockRequest |"
      puts "|---|---|---|---|"
      costs = rounds.first.keys.to_h { |label| [label, median(rounds.map { |row| row[label] })] }
      base = costs.values.first
      costs.each do |label, each|
        puts "| #{label} | #{fmt(1 / each)} | #{fmt(each * 1e6)} | #{fmt(each / base, 2)}x |"
      end
      puts "\nThe requests (status as the plain loop got it):\n\n"
      requests.each { |request| puts "- `#{request["verb"]} #{request["target"][0, 90]}` #{request["status"]}" }
    end

    def title(app, count)
      shown = app.delete_prefix("#{ROOT}/")
      fixed = ENV["RUZZY_EXAMPLE_FIXED"] == "1" ? " (RUZZY_EXAMPLE_FIXED=1)" : ""
      "\n### Web app: CPU time per request (median of #{ROUNDS} rounds) on #{shown}#{fixed}, #{count} fixed " \
        "requests sent #{SHORT} and #{SHORT + REPEATS} times each (#{RUBY_DESCRIPTION[/\A\S+ \S+/]})\n\n"
    end

    # Child: loads the app in the test environment, as `ruzzy rack` does.
    def load_app(app)
      require "ruzzy"
      require "ruzzy/web"
      require "rack"
      require "rack/mock"
      Ruzzy::Web::AppLoader.load(app)
    end

    # Child --inputs: writes the input files into +dir+; prints their
    # requests as JSON.
    def write_inputs(app, dir, count)
      rack = load_app(app)
      gen = Ruzzy::Gen.request
      random = Random.new(SEED)
      per_route = Hash.new(0)
      found = []
      while found.size < count
        data = random.bytes(random.rand(8..160))
        request, = Ruzzy::Web::RequestGen.requests_of(gen, data)
        route = gen.routes.find { |known| known.verbs.include?(request.verb) && matches?(known, request.path) }
        next unless route && per_route[route.to_s] < (count / 4.0).ceil

        status = send_request(rack, request)
        next if status >= 500 # a finding would end ruzzy's replay

        per_route[route.to_s] += 1
        file = File.join(dir, format("request-%02d", found.size))
        File.binwrite(file, data)
        found << { file:, verb: request.verb, target: request.target, status: }
      end
      puts JSON.generate(found)
    end

    # Whether +path+ is one of +route+'s (its params filled).
    def matches?(route, path)
      pattern = Regexp.escape(route.template).gsub(/\\?[:*][A-Za-z_]\w*/, "[^/]*")
      path.match?(/\A#{pattern}\z/)
    end

    # Sends +request+ as a test does (Rack::MockRequest.env_for), reads
    # the body as a server does; returns the status.
    def send_request(rack, request)
      env = { method: request.verb, input: request.body.to_s }
      request.headers.each { |name, value| env[Ruzzy::Web.header_key(name)] = value }
      env["HTTP_COOKIE"] = request.cookie_header unless request.cookies.empty?
      env["CONTENT_TYPE"] = request.content_type if request.content_type
      status, _headers, body = rack.call(Rack::MockRequest.env_for(request.target, env))
      body.each { |_chunk| } # rubocop:disable Lint/EmptyBlock -- read, not kept
      body.close if body.respond_to?(:close)
      status.to_i
    end

    # Child --send: sends the requests of the input files in +dir+, each
    # +times+ times, plainly or (+how+ "rolled_back") each in a database
    # transaction rolled back afterwards, as ruzzy does.
    def send_all(app, dir, times, how)
      rack = load_app(app)
      gen = Ruzzy::Gen.request
      requests = Dir.glob(File.join(dir, "request-*")).map do |file|
        Ruzzy::Web::RequestGen.requests_of(gen, File.binread(file)).first
      end
      times.times do
        requests.each do |request|
          next send_request(rack, request) unless how == "rolled_back"

          connection = ActiveRecord::Base.connection
          connection.begin_transaction(joinable: false, _lazy: false)
          send_request(rack, request)
          connection.rollback_transaction
        end
      end
    end
  end

  # The web_rack benchmark's executions table: executions per second of a
  # campaign (`ruzzy --keep-going rack`, from an empty corpus: fuzzing as a
  # user runs it, mutation and corpus work included) with one worker and
  # with one per core.
  module WebCampaigns
    module_function

    def table(app, seconds)
      puts "\n### Web app: executions per second of a #{seconds} s campaign from an empty corpus " \
           "(`ruzzy --keep-going --workers=N rack`, -seed=1)\n\n"
      puts "| workers | executions | seconds | executions/s |"
      puts "|---|---|---|---|"
      [1, Etc.nprocessors].uniq.each do |workers|
        executions, took = campaign(app, workers, seconds)
        puts "| #{workers} | #{WebRack.fmt(executions)} | #{took} | #{WebRack.fmt(executions.fdiv(took))} |"
      end
    end

    # [executions, seconds] of one campaign.
    def campaign(app, workers, seconds)
      Dir.mktmpdir("ruzzy-bench-web-campaign") do |dir|
        output, = Open3.capture2e("ruzzy", "--keep-going", "--workers=#{workers}", "rack", app, "-seed=1",
                                  "-max_total_time=#{seconds}", chdir: dir)
        ran = output.match(/^ruzzy: campaign: (\d+) executions in (\d+) s/)
        abort "no campaign summary from #{workers} worker(s):\n#{output.lines.last(30).join}" unless ran

        ran.captures.map(&:to_i)
      end
    end
  end
end

case ARGV.first
when "--inputs" then Bench::WebRack.write_inputs(ARGV[1], ARGV[2], Integer(ARGV[3]))
when "--send" then Bench::WebRack.send_all(ARGV[1], ARGV[2], Integer(ARGV[3]), ARGV[4])
else Bench::WebRack.main(File.expand_path(ARGV.first || Bench::WebRack::APP))
end

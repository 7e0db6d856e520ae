# frozen_string_literal: true

# May use: default_args, detectors, engine, error, exit_status, feedback, findings, fuzzed_data_provider, gen,
# guidance, native, sanitizers, version, web.

require_relative "ruzzy/version"
require_relative "ruzzy/exit_status"
require_relative "ruzzy/error"
require_relative "ruzzy/findings/report"
require_relative "ruzzy/findings/expected_exceptions"
require_relative "ruzzy/engine/relaunch"
require_relative "ruzzy/default_args"
require_relative "ruzzy/native"
require_relative "ruzzy/sanitizers"
Ruzzy::Native.require_extension
require_relative "ruzzy/feedback/coverage"
require_relative "ruzzy/feedback/compare_hooks"
require_relative "ruzzy/feedback/literal_dictionary"
require_relative "ruzzy/detectors"
require_relative "ruzzy/fuzzed_data_provider"
require_relative "ruzzy/guidance"
require_relative "ruzzy/gen"
require_relative "ruzzy/gen/typed_target"
require_relative "ruzzy/engine/session"
require_relative "ruzzy/web"
require "pathname"

# A coverage-guided fuzzer for Ruby code and Ruby C extensions, driven by
# libFuzzer.
#
#   require "ruzzy"
#   Ruzzy.fuzz(->(data) { MyParser.parse(data); nil })
module Ruzzy
  # The AddressSanitizer + libFuzzer preload (see Ruzzy::Sanitizers).
  ASAN_PATH = Sanitizers.path("address")

  # The UndefinedBehaviorSanitizer + libFuzzer preload.
  UBSAN_PATH = Sanitizers.path("undefined")

  # The directory holding ruzzy's native files (the extension, the sanitizer
  # preloads), as a Pathname: `Ruzzy::EXT_PATH / "asan_with_fuzzer.so"`.
  EXT_PATH = Pathname.new(Sanitizers.native_dir)

  # The file extension of the sanitizer preloads.
  DLEXT = Sanitizers::DLEXT

  module_function

  # The fuzzing run of this process (see Ruzzy::Session).
  def session
    @session ||= Session.new
  end

  # Fuzzes +test_one_input+ with libFuzzer. Never returns normally: libFuzzer
  # ends the process (status 0 when -runs or -max_total_time are reached,
  # EXIT_FINDING after a finding).
  #
  # +test_one_input+ is any object responding to #call (a lambda, a proc, a
  # Method). It receives each input as a binary (ASCII-8BIT) String and
  # returns nil or 0 to keep going, or -1 to keep the input out of the corpus.
  # Any exception it raises is a finding: the report shows the exception and
  # its Ruby backtrace, and libFuzzer saves the input as crash-<sha1>.
  #
  # +args+ is libFuzzer's argv, program name first (DEFAULT_ARGS when not
  # given; also as the keyword args:).
  #
  # A typed target takes generators instead (Ruzzy::Gen,
  # docs/typed-fuzz-tests.md): Ruzzy.fuzz(->(n, s) { ... }, Gen.integer,
  # Gen.string) calls it with one value of each per input; a finding's
  # arguments are shrunk and printed as a `ruzzy fuzz v1` regression file.
  #
  # +compare_hooks+ (default true, or false when RUZZY_COMPARE_HOOKS=0)
  # reports comparisons, pattern matches and number conversions to
  # libFuzzer while fuzzing; a list of Ruzzy::CompareHooks::GROUPS
  # (%i[integer string]) reports only those. See Ruzzy::CompareHooks.
  #
  # +literal_dict+ (default true, or false when RUZZY_LITERAL_DICT=0) gives
  # libFuzzer the literals of the instrumented code as dictionary words,
  # with the user's -dict; see Ruzzy::LiteralDictionary.
  #
  # +detectors+ (default true: all but those named in
  # RUZZY_DISABLE_DETECTORS) turns on the bug detectors, which make
  # findings of command injection, path traversal, unsafe deserialization,
  # code injection and ReDoS; false turns them off, a list of
  # Ruzzy::Detectors.names keeps only those. See Ruzzy::Detectors.
  #
  # +ignore+ lists the exceptions the target raises on purpose for bad input:
  # they are ordinary inputs, not findings. See Ruzzy::ExpectedExceptions.
  # A detector's class (Ruzzy::Detectors::PathTraversal) silences it.
  #
  # +mutator+ (called as mutator.call(data, max_size, seed)) replaces
  # libFuzzer's mutations and returns the new input, a String of at most
  # max_size bytes; it may call Ruzzy.mutate for libFuzzer's own.
  # +crossover+ (crossover.call(data1, data2, max_size, seed)) combines two
  # corpus inputs into a new one. Both need libFuzzer's custom mutator hooks:
  # ruzzy's bundled libFuzzer and its sanitizer preloads have them.
  #
  # The defaults of the keywords are the session's (the ruzzy command's
  # options, then the environment's). When +args+ starts with the program
  # name (the default), libFuzzer is given the command that started this
  # process instead, so that -fork, -jobs, -merge and -minimize_crash can
  # start more processes like it.
  def fuzz(test_one_input, *arguments, args: nil, compare_hooks: session.compare_hooks, ignore: nil,
           mutator: nil, crossover: nil, literal_dict: session.literal_dict, detectors: session.detectors)
    target, args = Gen::TypedTarget.for_fuzz(test_one_input, arguments, args, session)
    session.fuzz(target, args, compare_hooks:, ignore:, mutator:, crossover:, literal_dict:, detectors:)
  end

  # Fuzzes the Rack app +app+ (a Rails or Sinatra app, anything with
  # #call(env)) in this process, one request per input (docs/web-apps.md).
  # Each input decodes into a Ruzzy::Web::Request to one of +routes+ ("VERB
  # /path/:param" Strings; by default the routes Rails and Sinatra declare)
  # or to any path. A response is a finding when its status is in
  # +statuses+ (an exception escaping the app counts as the status its
  # framework answers it with), or when +oracle+ (called with the request
  # and a Ruzzy::Web::Response) returns true; bug detectors report as in
  # Ruzzy.fuzz. When Active Record is connected, each request runs in a
  # transaction rolled back afterwards. With +session+ above 1, an input is
  # a sequence of up to that many requests that carries cookies, a CSRF
  # token and the ids earlier responses returned. +openapi+ (an OpenAPI or
  # Swagger file) adds the operations it describes, with the property names
  # of their JSON bodies. Keys are drawn from +names+ (by default the
  # names the app's code mentions) or are any text. The other keywords are
  # Ruzzy.fuzz's.
  def fuzz_rack(app, routes: nil, statuses: 500..599, oracle: nil, session: 1, openapi: nil, names: nil, args: nil,
                **options)
    target = Web::RackTarget.new(app, statuses:, oracle:)
    changes = Web.test_mode!
    requests = Gen.request(routes:, session:, openapi:, names:)
    info = Web.info(requests.routes, changes, session)
    warn info
    warn Campaign.target_line(info.delete_prefix("INFO: ")) if ENV.key?(Campaign::ENV_FINDINGS_DIR)
    expression = Web.app_expression(app)
    server = Web.server(app)
    self.session.input_description = lambda do |input, error|
      sent = target.sent_for(error) || (input && Web::RequestGen.requests_of(requests, input))
      Web.describe(sent, expression, server) if sent
    end
    fuzz(target.method(:call), requests, args:, **options)
  end

  # libFuzzer's own mutation of +data+ (at most +max_size+ bytes), for use
  # inside a custom mutator (see Ruzzy.fuzz).
  def mutate(data, max_size)
    raise TypeError, "data must be a String, got #{data.inspect}" unless data.is_a?(String)
    unless max_size.is_a?(Integer) && max_size.positive?
      raise InvalidArgumentsError, "max_size must be a positive Integer, got #{max_size.inspect}"
    end

    Native._mutate(data, max_size)
  end

  # Turns on Ruby coverage, then requires +harness_script+ (which calls
  # Ruzzy.fuzz). A relative path is taken relative to the calling file, as
  # with require_relative. Keywords as for Ruzzy::Coverage.start.
  #
  #   # tracer.rb
  #   require "ruzzy"
  #   Ruzzy.trace("harness.rb")
  #
  # The `ruzzy` command does the same in one step: `ruzzy harness.rb`.
  def trace(harness_script, include: [], exclude: [], map_size: nil)
    unless harness_script.is_a?(String) || harness_script.respond_to?(:to_path)
      raise InvalidArgumentsError, "harness_script must be a path, got #{harness_script.inspect}"
    end

    path = File.expand_path(harness_script.to_s, File.dirname(caller_locations(1, 1).first.absolute_path || "."))
    raise InvalidArgumentsError, "no such harness file: #{path}" unless File.file?(path)

    Coverage.start(include:, exclude:, map_size:)
    require path
  end

  # Fuzzes Ruzzy's bundled C extension, which has a heap-use-after-free
  # behind the input "HI", to check an installation: `ruzzy dummy`, or
  #
  #   LD_PRELOAD=$(ruby -e 'require "ruzzy"; print Ruzzy::ASAN_PATH') \
  #     ruby -e 'require "ruzzy"; Ruzzy.dummy'
  def dummy(args = DEFAULT_ARGS)
    require_dummy
    fuzz(->(data) { dummy_test_one_input(data) }, args)
  end

  # Runs one input through the bundled C extension (see Ruzzy.dummy).
  def dummy_test_one_input(data)
    require_dummy
    c_dummy_test_one_input(data)
  end

  def require_dummy
    require File.join(Sanitizers.native_dir, "dummy")
  rescue LoadError => e
    unless File.file?(File.join(Sanitizers.native_dir, "dummy.so"))
      raise SanitizerUnavailableError, "Ruzzy.dummy's C extension was not built when ruzzy was installed: " \
                                       "#{Sanitizers.build_report}"
    end

    raise SanitizerUnavailableError, "Ruzzy.dummy needs AddressSanitizer preloaded: run `ruzzy dummy`, or " \
                                     "LD_PRELOAD=#{ASAN_PATH} ruby ... (#{e.message})"
  end

  # The `INFO:` line naming the libFuzzer that Ruzzy.fuzz will run.
  def engine
    Native._engine
  end

  # Ruzzy 0.8's remaining module functions, so that code written for it
  # runs unchanged (see docs/migrating-from-ruzzy.md; its constants ARGV0,
  # EXT_PATH and DLEXT are above and in default_args.rb;
  # c_libfuzzer_is_loaded, c_trace_cmp8 and c_trace_div8 are native).

  # Ruzzy.fuzz under 0.8's name for its native entry point.
  def c_fuzz(test_one_input, args)
    fuzz(test_one_input, args)
  end

  # Turns on coverage and requires +harness_path+ (0.8's native half of
  # Ruzzy.trace; a relative path is taken from the current directory).
  def c_trace(harness_path)
    trace(File.expand_path(harness_path.to_s))
  end

  private_class_method :require_dummy
end

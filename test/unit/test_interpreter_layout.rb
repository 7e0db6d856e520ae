# frozen_string_literal: true

require_relative "../test_helper"

# The interpreter layouts ruzzy reads for precise locations: on every
# supported Ruby a layout is compiled in, and every field it reads agrees
# with what the public API says. The public-API fallback (forced with
# RUZZY_LOCATIONS=public) is tested for what it can and cannot do.
class TestInterpreterLayout < Minitest::Test
  # The layout each supported Ruby must use.
  LAYOUTS = { "3.1" => "3.1", "3.3" => "3.3", "3.4" => "3.4" }.freeze
  ISEQ_TYPES = %i[top method block class rescue ensure eval main plain].freeze

  SUBJECTS = <<~RUBY
    # Methods, blocks and classes with every kind of parameter, so the
    # parameter block before the location is exercised.
    class Subjects
      def plain(a, b = 1, *rest, c, d:, e: 2, **opts, &blk) = a
      def self.single = yield
      def with_block = [1].map { |x| x + 1 }
      def with_rescue
        raise "x"
      rescue StandardError
        nil
      end
    end
  RUBY

  # Prints, for each iseq, what the layout reads and what the public API says.
  PROBE = <<~RUBY.freeze
    require "ruzzy"
    require "json"
    require_relative "subjects"
    iseqs = [RubyVM::InstructionSequence.compile_file(File.expand_path("subjects.rb", __dir__))]
    %i[plain with_block with_rescue].each { |m| iseqs << RubyVM::InstructionSequence.of(Subjects.instance_method(m)) }
    iseqs << RubyVM::InstructionSequence.of(Subjects.method(:single))
    iseqs << RubyVM::InstructionSequence.of(proc { |x, y| x })
    iseqs.each do |iseq|
      read = Ruzzy::Native._probe_iseq(iseq)
      misc = iseq.to_a[4]
      public_api = {
        wrapper_matches: true,
        type: #{ISEQ_TYPES.inspect}.index(iseq.to_a[9]),
        path: iseq.path, label: iseq.label, base_label: iseq.base_label,
        first_lineno: iseq.first_lineno, node_id: misc[:node_id], code_location: misc[:code_location],
      }
      puts JSON.generate([read, public_api])
    end
    def caller_probe = Ruzzy::Native._probe_caller
    puts JSON.generate(["caller", caller_probe, __FILE__, __LINE__ - 1])
    puts JSON.generate(["block", [1].map { Ruzzy::Native._probe_caller }.first, __FILE__, __LINE__])
  RUBY

  def probe(env: {}, args: [])
    in_tmpdir do |dir|
      File.write(File.join(dir, "subjects.rb"), SUBJECTS)
      File.write(File.join(dir, "probe.rb"), PROBE)
      result = ruby(*args, "probe.rb", chdir: dir, env:)
      assert_exit 0, result
      return result.stdout.lines.map { |line| JSON.parse(line, symbolize_names: true) }
    end
  end

  def test_this_ruby_has_a_known_layout
    expected = LAYOUTS.fetch(RUBY_VERSION[/\A\d+\.\d+/]) { flunk "Ruby #{RUBY_VERSION} is not a supported version" }
    result = ruby("-rruzzy", "-e", <<~RUBY)
      Ruzzy::Coverage.start
      require "json"
      eval("1 + 1") # an instrumented event makes the layout decide
      load File.expand_path("#{File.join(EXAMPLES, "lib", "hello.rb")}")
      Hello.parse("x") rescue nil
      puts JSON.generate(Ruzzy::Coverage.info)
    RUBY
    assert_exit 0, result
    info = JSON.parse(result.stdout.lines.last, symbolize_names: true)
    assert info[:precise], "the runtime cross-check rejected the layout:\n#{result.stderr}"
    assert_equal expected, info[:layout]
    refute_match(/WARNING/, result.stderr)
  end

  def test_every_iseq_field_read_agrees_with_the_public_api
    lines = probe
    iseqs = lines.reject { |line| line.first.is_a?(String) }
    assert_equal 6, iseqs.size
    iseqs.each do |read, public_api|
      refute_nil read, "no layout compiled in for Ruby #{RUBY_VERSION}"
      assert_equal public_api, read
    end
  end

  def test_the_calling_frame_is_read_through_thread_context_and_frame_layouts
    lines = probe.select { |line| line.first.is_a?(String) }
    %w[caller block].each do |kind|
      _, read, _file, expected_line = lines.assoc(kind)
      refute_nil read, "no layout compiled in for Ruby #{RUBY_VERSION}"
      path, line, = read
      assert_equal ["probe.rb", expected_line], [File.basename(path), line], kind
    end
  end

  # Ruby 3.4 compiles with Prism by default; both compilers must work.
  def test_every_compiler_of_this_ruby_gets_precise_locations
    parsers = RUBY_VERSION >= "3.4" ? ["--parser=prism", "--parser=parse.y"] : []
    [[], *parsers.map { |flag| [flag] }].each do |args|
      probe(args:).reject { |line| line.first.is_a?(String) }.each do |read, public_api|
        assert_equal public_api, read, "compiled with #{args.inspect}"
      end
    end
  end

  def test_forced_public_api_fallback_reads_no_internals
    result = ruby("-rruzzy", "-e", <<~RUBY, env: { "RUZZY_LOCATIONS" => "public" })
      Ruzzy::Coverage.start
      require "json"
      eval("1 + 1")
      puts JSON.generate(Ruzzy::Coverage.info)
    RUBY
    assert_exit 0, result
    info = JSON.parse(result.stdout, symbolize_names: true)
    refute info[:precise]
    assert_nil info[:layout]
  end
end

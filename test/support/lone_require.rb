# frozen_string_literal: true

# Run as `ruby -I LIB lone_require.rb FILE...` (test/unit/
# test_lib_files_load_alone.rb): for each FILE, a child process forked from
# this one, which has loaded nothing of ruzzy, requires FILE alone, then
# every file FILE requires inside its methods (a require made when needed),
# then, when it uses Ruzzy::Native (lib/ruzzy/native.rb), the extension
# that module's methods and constants come from (loaded by whoever starts
# fuzzing), then resolves every constant FILE names (Foo, Foo::Bar, ::Foo) in the
# lexical scope it is named in. Then it calls, for each module (or class)
# with public module functions defined in FILE, the one call the table in
# the file LONE_REQUIRE_CALLS gives it (a line per call, "Ruzzy::Mod.function",
# a tab, its arguments as Ruby source: the row whose function FILE
# defines; read without JSON, which no file checked may find loaded).
# Prints one JSON line per FILE: the error its require raised, the
# constants that do not resolve ("Name (line N)"), the circular-require
# warnings Ruby gave while loading it, the modules the table has no call
# for, the calls that raised a NameError (NoMethodError too: a method or
# constant of a file FILE does not require) and those that raised anything
# else (which the arguments may be meant to make them raise).
#
# A constant named in a defined?() anywhere in FILE is optional there (the
# file checks for it) and is not resolved. A path whose first part is not a
# constant (value::NAME) is not resolved either.
module LoneRequire
  CONSTANT_REFS = %i[var_ref const_ref top_const_ref const_path_ref].freeze

  module_function

  def run(files)
    files.each do |file|
      reader, writer = IO.pipe
      pid = fork do
        reader.close
        result = check(file)
        require "json" # only now, so that no file it checks finds it loaded
        writer.write(JSON.generate(result))
        writer.close
        exit!(0)
      end
      writer.close
      out = reader.read
      Process.wait(pid)
      puts(out.empty? ? %({"file": #{file.dump}, "error": "the check died: #{Process.last_status}"}) : out)
    end
  end

  # The result for +file+, in this (forked) process.
  def check(file)
    circular = watch_circular_requires
    begin
      require file
    rescue Exception => e # rubocop:disable Lint/RescueException -- a ScriptError is what this looks for
      return { "file" => file, "error" => "#{e.class}: #{e.message.lines.first&.chomp}" }
    end
    $VERBOSE = nil
    require "ripper"
    tree = Ripper.sexp(File.read(file), file)
    lazy_requires(tree, file)
    Ruzzy::Native.require_extension if defined?(Ruzzy::Native)
    unresolved = Walker.new(optional_names(tree)).unresolved(tree)
    uncalled, failed, raised = Calls.new(ENV.fetch("LONE_REQUIRE_CALLS", nil)).run(file)
    { "file" => file, "unresolved" => unresolved, "circular" => circular, "uncalled" => uncalled, "failed" => failed,
      "raised" => raised }
  rescue Exception => e # rubocop:disable Lint/RescueException -- reported, not raised, in the child
    { "file" => file, "error" => "#{e.class} while checking: #{e.message}" }
  end

  # Ruby warns of a circular require only when $VERBOSE; the warnings it
  # gives are collected, every other one dropped.
  def watch_circular_requires
    found = []
    Warning.singleton_class.prepend(Module.new do
      define_method(:warn) { |message, *| found << message.lines.first.strip if message.include?("circular require") }
    end)
    $VERBOSE = true
    found
  end

  # Requires what +file+ requires with a literal argument anywhere in it.
  def lazy_requires(node, file)
    return unless node.is_a?(Array)

    if node.first == :command && node[1].is_a?(Array) && %w[require require_relative].include?(node[1][1])
      feature = literal(node[2])
      if feature
        node[1][1] == "require" ? require(feature) : require(File.expand_path(feature, File.dirname(file)))
      end
    end
    node.each { |child| lazy_requires(child, file) }
  end

  # The String of a one-argument list holding a plain string literal.
  def literal(args)
    args = args[1] if args.first == :args_add_block
    return unless args.is_a?(Array) && args.size == 1 && args[0].first == :string_literal

    parts = args[0][1].drop(1)
    parts[0][1] if parts.size == 1 && parts[0].first == :@tstring_content
  end

  # The constant names that appear inside a defined?().
  def optional_names(node, inside: false, found: [])
    return found unless node.is_a?(Array)

    found << node[1] if inside && node.first == :@const
    node.each { |child| optional_names(child, inside: inside || node.first == :defined, found:) }
    found
  end

  # One call of a public module function per module a file defines, from
  # a table; a call that raises a NameError (NoMethodError included) fails.
  class Calls
    def initialize(table_path)
      @table = table_path ? File.readlines(table_path, chomp: true).to_h { |line| line.split("\t", 2) } : {}
    end

    # [modules with no call in the table, ["Mod.function(args): NameError..."],
    # ["Mod.function(args): OtherError..."]] for the modules with public
    # module functions defined in +file+.
    def run(file)
      uncalled = []
      failed = []
      raised = []
      defining(file).each do |mod, functions|
        name, arguments = @table.find { |key, _| functions.map { |function| "#{mod.name}.#{function}" }.include?(key) }
        next uncalled << mod.name unless name

        error = call(name, arguments) or next
        (error.is_a?(NameError) ? failed : raised) << "#{name}(#{arguments}): #{error.class}: #{error.message[0, 200]}"
      end
      [uncalled, failed, raised]
    end

    private

    # {module => [its public module functions defined in +file+]}.
    def defining(file)
      found = {}
      ObjectSpace.each_object(Module) do |mod|
        next unless mod.name&.start_with?("Ruzzy")

        functions = mod.singleton_methods(false).select do |function|
          mod.singleton_class.public_method_defined?(function) && mod.method(function).source_location&.first == file
        end
        found[mod] = functions.map(&:to_s) unless functions.empty?
      end
      found.sort_by { |mod, _| mod.name }
    end

    # What the call of +name+ ("Ruzzy::Mod.function") with +arguments+
    # raised, or nil.
    def call(name, arguments)
      TOPLEVEL_BINDING.eval("#{name}(#{arguments})", __FILE__, __LINE__) # Ruzzy::Mod.function(arguments)
      nil
    rescue Exception => e # rubocop:disable Lint/RescueException -- reported, not raised, in the child
      e
    end
  end

  # Walks a Ripper tree with the lexical scopes (Module.nesting) of each
  # point, collecting the constant references that do not resolve.
  class Walker
    def initialize(optional)
      @optional = optional
      @unresolved = []
    end

    def unresolved(tree)
      walk(tree, [])
      @unresolved
    end

    private

    def walk(node, nesting)
      return unless node.is_a?(Array)
      return walk_definition(node, nesting) if %i[module class].include?(node.first)
      return if node.first == :defined
      return reference(node, nesting) if constant_path?(node)

      node.each { |child| walk(child, nesting) }
    end

    # `module Name` / `class Name < Super`: the body runs with the module
    # it defines innermost.
    def walk_definition(node, nesting)
      walk(node[2], nesting) if node.first == :class
      mod = resolve(node[1], nesting)
      return walk(node.last, nesting + [mod]) if mod.is_a?(Module)

      @unresolved << "#{name(node[1])} (line #{line(node[1])}, being defined)"
    end

    def reference(node, nesting)
      return if @optional.include?(node.flatten.grep(String).first)
      return unless resolve(node, nesting).nil?

      @unresolved << "#{name(node)} (line #{line(node)})"
    end

    # Whether +node+ is Foo, ::Foo or a path of constants (Foo::Bar).
    def constant_path?(node)
      case node.first
      when :var_ref, :const_ref then node[1].first == :@const
      when :top_const_ref then true
      when :const_path_ref then constant_path?(node[1])
      else false
      end
    end

    # The value of the constant path +node+ seen from +nesting+, or nil.
    def resolve(node, nesting)
      case node.first
      when :var_ref, :const_ref then lexical(node[1][1], nesting)
      when :top_const_ref then Object.const_defined?(node[1][1]) ? Object.const_get(node[1][1]) : nil
      when :const_path_ref
        scope = resolve(node[1], nesting)
        scope.const_get(node[2][1]) if scope.is_a?(Module) && scope.const_defined?(node[2][1])
      end
    end

    # Ruby's lookup of a bare name: the lexical scopes, innermost first,
    # then the innermost one's ancestors (and Object).
    def lexical(name, nesting)
      scope = nesting.reverse.find { |mod| mod.const_defined?(name, false) }
      scope ||= (nesting.last || Object).then { |mod| mod if mod.const_defined?(name) }
      scope&.const_get(name)
    end

    def name(node)
      node.flatten.each_cons(2).select { |kind, _| kind == :@const }.map(&:last).join("::")
    end

    # The line of the first name in +node+ (Ripper's [:@const, name,
    # [line, column]]).
    def line(node)
      flat = node.flatten
      flat[flat.index(:@const) + 2]
    end
  end
end

LoneRequire.run(ARGV) if $PROGRAM_NAME == __FILE__

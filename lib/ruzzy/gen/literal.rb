# frozen_string_literal: true

require_relative "../error"

module Ruzzy
  module Gen
    # The readable regression file of a typed fuzz test:
    #
    #   ruzzy fuzz v1
    #   4660
    #   "/etc/passwd\n"
    #   [1, -2, Float::INFINITY]
    #   {:mode => :fast, "name" => nil}
    #   Point.new(x: 1, y: 2.5)
    #
    # The first line, then one Ruby literal per argument, one per line
    # (blank lines and lines starting with # are skipped). Literals are
    # Integers, Floats (with Float::INFINITY, -Float::INFINITY,
    # Float::NAN), double-quoted Strings with Ruby's escapes, Symbols, true,
    # false, nil, Arrays, Hashes (=> or symbol keys) and structs written
    # ClassName.new(field: literal, ...). The text is parsed, never
    # evaluated: a struct is a StructLiteral, turned into an object only by
    # the generator that expects that class.
    module Literal
      HEADER = "ruzzy fuzz v1"

      # A struct in a regression file: its class name and fields.
      StructLiteral = Struct.new(:name, :fields)

      module_function

      # Whether +text+ (a file's contents) is a regression file.
      def file?(text)
        text.b.start_with?("#{HEADER}\n") || text.b == HEADER
      end

      # The file text holding +literals+ (one per argument).
      def dump_file(literals)
        "#{HEADER}\n#{literals.map { |literal| dump(literal) }.join("\n")}\n"
      end

      # The literals of the file +text+, each with its line number; +path+
      # names the file in errors.
      def parse_file(text, path)
        # Loaded here, not with ruzzy: a program that never loads
        # StringScanner keeps it unloaded (and unhooked).
        require "strscan"
        lines = text.b.force_encoding(Encoding::UTF_8).lines
        unless lines.first&.chomp == HEADER
          raise RegressionFileError, "#{path}:1:1: a regression file starts with the line #{HEADER.inspect}"
        end

        lines.each_with_index.drop(1).filter_map do |line, index|
          next if line.strip.empty? || line.lstrip.start_with?("#")

          [index + 1, Parser.new(line.chomp, path, index + 1).parse]
        end
      end

      # +literal+ as text.
      def dump(literal)
        case literal
        when Integer, true, false, nil then literal.inspect
        when Float then dump_float(literal)
        when String then dump_string(literal)
        when Symbol then dump_symbol(literal)
        when Array then "[#{literal.map { |item| dump(item) }.join(", ")}]"
        when Hash then "{#{literal.map { |key, value| "#{dump(key)} => #{dump(value)}" }.join(", ")}}"
        when StructLiteral
          "#{literal.name}.new(#{literal.fields.map { |name, value| "#{name}: #{dump(value)}" }.join(", ")})"
        else raise ArgumentError, "no literal for #{literal.class}"
        end
      end

      # Whether +value+ can be written as a literal.
      def literal?(value)
        case value
        when Integer, Float, String, Symbol, true, false, nil then true
        when Array then value.all? { |item| literal?(item) }
        when Hash then value.all? { |key, item| literal?(key) && literal?(item) }
        when StructLiteral then value.fields.values.all? { |item| literal?(item) }
        else false
        end
      end

      def dump_float(value)
        return "Float::NAN" if value.nan?
        return value.positive? ? "Float::INFINITY" : "-Float::INFINITY" if value.infinite?

        value.inspect
      end

      def dump_string(value)
        value.encoding == Encoding::UTF_8 && value.valid_encoding? ? value.inspect : value.b.inspect
      end

      def dump_symbol(value)
        name = value.to_s
        name.match?(/\A[A-Za-z_][A-Za-z0-9_]*[?!]?\z/) ? ":#{name}" : ":#{dump_string(name)}"
      end

      # Reads one literal from one line.
      class Parser
        ESCAPES = { "n" => "\n", "t" => "\t", "r" => "\r", "0" => "\0", "e" => "\e", "a" => "\a",
                    "b" => "\b", "f" => "\f", "v" => "\v", "s" => " " }.freeze
        NUMBER = /[-+]?(?:0x\h+(?:_\h+)*|\d+(?:_\d+)*(?:\.\d+(?:_\d+)*)?(?:[eE][-+]?\d+)?)/
        CONSTANT = /[A-Z]\w*(?:::[A-Z]\w*)*/

        def initialize(line, path, number)
          @scanner = StringScanner.new(line)
          @path = path
          @number = number
        end

        def parse
          value = literal
          space
          fail_here("the end of the line after the literal") unless @scanner.eos?
          value
        end

        private

        def literal
          space
          if @scanner.scan(/(-?)Float::(INFINITY|NAN)\b/) then special_float
          elsif @scanner.scan(NUMBER) then number(@scanner.matched)
          elsif @scanner.scan(/(true|false|nil)\b/) then { "true" => true, "false" => false, "nil" => nil }[@scanner[1]]
          elsif @scanner.check(/"/) then string
          elsif @scanner.scan(/:(?=")/) then string.to_sym
          elsif @scanner.scan(/:([A-Za-z_]\w*[?!]?)/) then @scanner[1].to_sym
          elsif @scanner.scan(/\[/) then sequence("]") { literal }
          elsif @scanner.scan(/\{/) then hash
          elsif @scanner.scan(CONSTANT) then struct(@scanner.matched)
          else
            fail_here("a literal (Integer, Float, String, Symbol, true, false, nil, Array, Hash or Struct)")
          end
        end

        def special_float
          return Float::NAN if @scanner[2] == "NAN"

          @scanner[1].empty? ? Float::INFINITY : -Float::INFINITY
        end

        def number(text)
          plain = text.delete("_")
          plain.match?(/[.eE]/) && !plain.match?(/0x/i) ? Float(plain) : Integer(plain)
        end

        # Items up to +close+, separated by commas (a trailing one allowed).
        def sequence(close)
          items = []
          loop do
            space
            break if @scanner.scan(Regexp.new(Regexp.escape(close)))

            items << yield
            space
            next if @scanner.scan(/,/)
            break if @scanner.scan(Regexp.new(Regexp.escape(close)))

            fail_here("\",\" or #{close.inspect}")
          end
          items
        end

        def hash
          sequence("}") do
            if @scanner.scan(/([A-Za-z_]\w*[?!]?):(?!:)/)
              [@scanner[1].to_sym, literal]
            else
              key = literal
              space
              fail_here("\"=>\"") unless @scanner.scan(/=>/)
              [key, literal]
            end
          end.to_h
        end

        def struct(name)
          fail_here("\".new(\" after #{name}") unless @scanner.scan(/\.new\(/)
          fields = sequence(")") do
            space
            fail_here("a field name (name: literal)") unless @scanner.scan(/([a-z_]\w*):(?!:)/)
            [@scanner[1].to_sym, literal]
          end
          StructLiteral.new(name, fields.to_h)
        end

        def string
          start = @scanner.pos
          @scanner.getch
          text = +"".b
          loop do
            fail_at(start, "a closing \" for this String") if @scanner.eos?
            char = @scanner.getch
            break if char == '"'

            text << (char == "\\" ? escape : char).b
          end
          text.force_encoding(Encoding::UTF_8)
          text.valid_encoding? ? text : text.force_encoding(Encoding::BINARY)
        end

        def escape
          if @scanner.scan(/x(\h{1,2})/) then @scanner[1].hex.chr
          elsif @scanner.scan(/u(\h{4})/) then [@scanner[1].hex].pack("U")
          elsif @scanner.scan(/u\{(\h{1,6}(?: \h{1,6})*)\}/) then @scanner[1].split.map(&:hex).pack("U*")
          elsif @scanner.scan(/([0-7]{1,3})/) then (@scanner[1].oct & 0xFF).chr
          elsif (char = @scanner.getch) then ESCAPES.fetch(char, char)
          else
            fail_here("an escape after \\")
          end
        end

        def space
          @scanner.skip(/[ \t]*/)
        end

        def fail_here(expected)
          fail_at(@scanner.pos, expected)
        end

        def fail_at(pos, expected)
          column = @scanner.string.byteslice(0, pos).force_encoding(Encoding::UTF_8).scrub.length + 1
          found = @scanner.eos? ? "the end of the line" : @scanner.string.byteslice(pos, 12).inspect
          raise RegressionFileError, "#{@path}:#{@number}:#{column}: expected #{expected}, found #{found}"
        end
      end
    end
  end
end

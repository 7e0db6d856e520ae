# frozen_string_literal: true

module Ruzzy
  module Detectors
    # The command names a POSIX shell would run for a script: the first
    # word of each simple command, after separators (; & | newline), in
    # subshells, command substitutions ($(...) and `...`, also inside
    # double quotes) and after variable assignments or prefix words such as
    # `sudo` and `env`. Quotes and backslashes are removed as the shell
    # removes them. A model made for one question (could the script run a
    # given command?), not a shell parser: redirections, here-documents and
    # expansions are read as plain words.
    module ShellCommand
      # Characters that end a command (outside quotes).
      SEPARATORS = [";", "&", "|", "\n"].freeze

      # Words after which the next word is still in command position.
      PREFIXES = %w[! { ( if then else elif do while until time exec command env nohup nice sudo xargs].freeze

      module_function

      # The words of +script+ in command position, in order.
      def commands(script)
        Scanner.new(script).commands
      end

      # Walks a script once, keeping the quoting and command-position state.
      class Scanner
        def initialize(script)
          @chars = script.chars
          @found = []
          @word = nil
          @command = true
          @quote = nil
          @nesting = []
        end

        def commands
          index = 0
          while index < @chars.length
            index = step(@chars[index], index)
            index += 1
          end
          finish_word
          @found
        end

        private

        # Handles the character at +index+; returns the index of the last
        # character it consumed.
        def step(char, index)
          return single_quoted(char, index) if @quote == "'"
          return escaped(index) if char == "\\"
          return open_substitution(index + 1) if char == "$" && @chars[index + 1] == "("
          return backtick(index) if char == "`"
          return double_quoted(char, index) if @quote == '"'

          unquoted(char)
          index
        end

        def single_quoted(char, index)
          char == "'" ? @quote = nil : append(char)
          index
        end

        def double_quoted(char, index)
          char == '"' ? @quote = nil : append(char)
          index
        end

        def escaped(index)
          append(@chars[index + 1].to_s) unless @chars[index + 1] == "\n"
          index + 1
        end

        def unquoted(char)
          case char
          when "'", '"' then @quote = char
                             append("")
          when *SEPARATORS then separate
          when "(" then open_nested
          when ")" then close_nested
          when /\s/ then finish_word
          else append(char)
          end
        end

        def backtick(index)
          if @nesting.last&.first == :backtick
            close_nested
          else
            open_nested(:backtick)
          end
          index
        end

        def open_substitution(index)
          open_nested(:paren)
          index
        end

        # A subshell or substitution: its first word is a command; after
        # it, the quoting around it comes back, and what follows is an
        # argument (the substitution took the command's place).
        def open_nested(kind = :paren)
          finish_word
          @nesting << [kind, @quote]
          @command = true
          @quote = nil
        end

        def close_nested
          finish_word
          return if @nesting.empty?

          _, @quote = @nesting.pop
          @command = false
        end

        def separate
          finish_word
          @command = true
        end

        def append(text)
          (@word ||= +"") << text
        end

        def finish_word
          word = @word
          @word = nil
          return if word.nil? || !@command
          return if word.match?(/\A[A-Za-z_]\w*=/) || PREFIXES.include?(word)

          @found << word
          @command = false
        end
      end
    end
  end
end

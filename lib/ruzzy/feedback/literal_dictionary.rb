# frozen_string_literal: true

require "digest/sha1"
require "tmpdir"
require_relative "../native"
require_relative "../settings"

module Ruzzy
  # A libFuzzer dictionary made from the program itself: the String and
  # Symbol literals of the instrumented code and the literal parts of its
  # Regexp literals (plus a string each Regexp accepts), and for the libafl
  # engine its Integer literals of two or more characters as decimal text
  # (a number compared after Integer() or to_i: LibAFL's input-to-state
  # replacement never makes an input longer, so it cannot write the digits
  # in, which libFuzzer's comparison tables do), collected as the
  # code is compiled after coverage starts, and handed to libFuzzer as its
  # -dict file (merged with the user's own -dict) when fuzzing starts.
  #
  # Words are 2 to 64 bytes (libFuzzer's longest); text of more than
  # three words (messages) and literals passed straight to require, raise,
  # warn, puts and the like are left out. Turned off with literal_dict: false,
  # `ruzzy --no-literal-dict`, RUZZY_LITERAL_DICT=0, or with the comparison
  # hooks (compare_hooks: false).
  module LiteralDictionary
    # Shortest and longest word kept (libFuzzer ignores longer ones).
    WORD_BYTES = (2..64)

    # Most words handed to libFuzzer (the first ones compiled win).
    MAX_WORDS = 4096

    # Instructions whose operands are literals.
    LITERAL_INSTRUCTIONS = %i[putobject putstring putchilledstring opt_str_freeze opt_str_uminus
                              opt_aref_with opt_aset_with duparray duphash].freeze

    # Methods whose literal argument is not input the program checks: a
    # literal passed straight to one of them is left out.
    MESSAGE_METHODS = %i[require require_relative raise fail warn puts print p].freeze

    # Where dictionary files go, named by their contents (so every process
    # of a -fork or -jobs run, and every run of one harness, shares one).
    DIRECTORY = File.join(Dir.tmpdir, "ruzzy-#{Process.uid}-dictionaries")

    module_function

    # Starts collecting the instructions of instrumented code as it is
    # compiled (called when coverage starts).
    def start
      @compiled ||= []
      @tracepoint ||= TracePoint.new(:script_compiled) do |tp|
        next unless tp.eval_script.nil?

        iseq = tp.instruction_sequence
        @compiled << iseq if Ruzzy::Native._instrumented_path?(iseq.absolute_path || iseq.path)
      end
      @tracepoint.enable
    end

    # Stops collecting.
    def stop
      @tracepoint&.disable
    end

    # The words collected so far, in the order they were compiled; with
    # numbers: true, Integer literals as decimal text too.
    def words(numbers: false)
      found = {}
      (@compiled || []).each { |iseq| instructions(iseq.to_a, found, numbers) }
      found.keys.first(MAX_WORDS)
    end

    # Whether RUZZY_LITERAL_DICT leaves the dictionary on (anything but "0").
    def environment_setting
      ENV.fetch(Settings::LITERAL_DICT, "1") != "0"
    end

    # +args+ (libFuzzer's arguments, a LibFuzzerArgs) with a -dict file
    # holding the program's words and those of the user's -dict. Unchanged
    # when there is nothing to add, when the user's file cannot be read
    # (libFuzzer reports it), or when -dict already names a file made here
    # (a -fork or -jobs child). +numbers+: see #words.
    def add_to(args, numbers: false)
      given = args.value("dict")
      return args if given && File.dirname(File.expand_path(given)) == DIRECTORY

      own = words(numbers:)
      return args if own.empty?

      user = given ? File.binread(given) : "".b
      path = write(user, own)
      warn "INFO: ruzzy: #{own.size} dictionary #{own.size == 1 ? "word" : "words"} from the literals of " \
           "instrumented code " \
           "(--no-literal-dict to leave them out)"
      args.with("dict", path)
    rescue SystemCallError, IOError => e
      warn "INFO: ruzzy: no dictionary from the program's literals (#{e.message})"
      args
    end

    # Writes the dictionary file; returns its path.
    def write(user, own)
      text = user.b
      text << "\n" unless text.empty? || text.end_with?("\n")
      text << "# ruzzy: literals of the instrumented code\n"
      own.each { |word| text << entry(word) << "\n" }
      Dir.mkdir(DIRECTORY, 0o700) unless File.directory?(DIRECTORY)
      path = File.join(DIRECTORY, "#{Digest::SHA1.hexdigest(text)}.dict")
      File.binwrite(path, text) unless File.exist?(path)
      path
    end

    # One dictionary line: the word quoted, with \\, \" and \xHH escapes.
    def entry(word)
      body = word.b.each_byte.map do |byte|
        if [0x5c, 0x22].include?(byte) then "\\#{byte.chr}"
        elsif byte.between?(0x20, 0x7e) then byte.chr
        else
          format("\\x%02X", byte)
        end
      end
      "\"#{body.join}\""
    end

    # Adds the literals of an instruction sequence (as from
    # RubyVM::InstructionSequence#to_a) and those nested in it.
    def instructions(iseq_array, found, numbers)
      body = iseq_array[13]
      return unless body.is_a?(Array)

      steps = body.grep(Array)
      steps.each_with_index do |instruction, index|
        literal = LITERAL_INSTRUCTIONS.include?(instruction.first) && !message?(steps[index + 1])
        instruction.drop(1).each do |operand|
          if nested_iseq?(operand)
            instructions(operand, found, numbers)
          elsif literal
            literal(operand, found, numbers)
          end
        end
      end
    end

    # Whether +instruction+ calls one of MESSAGE_METHODS.
    def message?(instruction)
      call = instruction&.find { |operand| operand.is_a?(Hash) && operand.key?(:mid) }
      call ? MESSAGE_METHODS.include?(call[:mid]) : false
    end

    def nested_iseq?(value)
      value.is_a?(Array) && value.first == "YARVInstructionSequence/SimpleDataFormat"
    end

    def literal(value, found, numbers)
      case value
      when String then add(value, found)
      when Symbol then add(value.name, found)
      when Integer then add(value.to_s, found) if numbers
      when Regexp then Ruzzy::Native._regexp_words(value).each { |word| add(word, found) }
      when Array, Hash then container(value, found, numbers)
      end
      nil
    end

    # The literals inside an Array or Hash literal.
    def container(value, found, numbers)
      # A call's own data ({mid:, flag:, orig_argc:}) is not a literal.
      return if value.is_a?(Hash) && value.key?(:mid)

      value.to_a.flatten(1).each { |item| literal(item, found, numbers) }
    end

    # Adds +word+ (bytes: a literal may be invalid in its encoding).
    def add(word, found)
      return unless WORD_BYTES.cover?(word.bytesize)

      word = word.b
      return if word.count(" ") >= 3

      found[word] = true
    end

    private_class_method :write, :entry, :instructions, :message?, :nested_iseq?, :literal, :container, :add
  end
end

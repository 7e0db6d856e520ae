# frozen_string_literal: true

require_relative "../own_files"

module Ruzzy
  module Findings
    # Ruby backtrace frames ("path:line:in 'label'" strings, innermost
    # first) as reports show them and findings are grouped by: the target's
    # own frames, each method once, in sanitizer form, named the same on
    # every Ruby version. Pure functions of their arguments.
    module RubyFrames
      module_function

      # Frames printed in sanitizer form.
      CRASH_FRAMES = 32

      # +frames+ (innermost first) with each method (file:method) only at its
      # outermost call: a hang deep in a recursion is named and shown the same
      # at whatever depth it was stopped (an exponential recursion's depth
      # varies from moment to moment), and the harness's frames are never
      # pushed out of the frames shown.
      def without_recursion(frames)
        frames.reverse.uniq { |frame| normalize_frame(frame) }.reverse
      end

      # The methods (token_name) of +frames+, innermost first, a run of
      # frames of one method named once: a direct recursion (an exception
      # raised at one depth or another is one bug) and a block in its own
      # method. Lazy: a backtrace can be deep.
      def methods_once_in_a_row(frames)
        frames.lazy.map { |frame| token_name(frame) }.chunk_while { |inner, outer| inner == outer }.map(&:first)
      end

      # A class or module body's label, its "block in" decorations gone.
      BODY_LABEL = /\A(?:<(?:class|module):.+>|singleton class)\z/
      private_constant :BODY_LABEL

      # file:method of a frame as an exception's DEDUP_TOKEN names it
      # (normalize_frame), and for a block in a class or module body (a
      # Sinatra route or filter, a Grape endpoint, a Roda route tree: every
      # block of a body has the body's label) its line as well,
      # `app.rb:<class:App>:27`: two routes raising one exception are two
      # bugs. (A hang is named without it: the line a loop was stopped at
      # varies.)
      def token_name(frame)
        name = normalize_frame(frame)
        line, label = frame.match(/:(\d+):in (.*)\z/)&.captures
        line && method_name(label).match?(BODY_LABEL) ? "#{name}:#{line}" : name
      end

      # +frames+ without those of methods written in C, which carry their
      # caller's file and line (a frame is left out when the next one has
      # its file and line), as Identity leaves them out of a native stack:
      # `1["title"]` raises in Integer#[]'s frame, `[]["title"]` in its
      # caller's (the interpreter calls Array#[] without one), and a
      # method ruzzy's comparison hooks wrap (Hash#fetch) shows two such
      # frames: all are one bug. (A recursion on one line is named once.)
      def without_c_methods(frames)
        sites = frames.map { |frame| frame[/\A(.+?:\d+):in /, 1] }
        frames.each_with_index.filter_map do |frame, index|
          frame unless sites[index] && sites[index] == sites[index + 1]
        end
      end

      # The innermost frames of +backtrace+ (Ruby's "path:line:in 'label'"
      # strings) as a sanitizer prints a stack trace ("    #0 0x0 in LABEL
      # PATH:LINE"), for tools that group crashes by their top frames
      # (ClusterFuzz's stack parser reads the frames that follow libFuzzer's
      # "deadly signal" line). A Ruby frame has no machine address: 0x0
      # stands in. The function is one word, as a C symbol
      # would be: ClusterFuzz keeps a frame's name up to the first space,
      # "(" or "[" and after the last "!", so those are percent-encoded
      # ("save%21"); "block in" decorations are dropped.
      def sanitizer_frames(backtrace)
        target_frames(backtrace).first(CRASH_FRAMES).each_with_index.map do |frame, index|
          path, line, label = frame.match(/\A(.*?):(\d+):in (.*)\z/)&.captures
          name = method_label(label).gsub(/[\s!()\[\]%]/) { |char| format("%%%02X", char.ord) }
          "    ##{index} 0x0 in #{name.empty? ? "<unknown>" : name} #{path || frame}:#{line || 0}\n"
        end.join
      end

      # A backtrace label: `name' (Ruby 3.1, 3.3) or 'Owner#name' (3.4).
      LABEL_QUOTES = /\A[`']|'\z/
      # The owner Ruby 3.4 puts before a method name ("Hello.", "Kernel#").
      LABEL_OWNER = /\A(?:[A-Z][\w:]*|#<[^>]*>)[#.]/
      # The numbers a compiled Action View template's method name ends in
      # (`_app_views_common__preview_html_erb__1979809271846736923_182340`:
      # its path's hash and the template object's id, "-" written "_"), new
      # in every process.
      TEMPLATE_NUMBERS = /(_\w+?)___?\d+_\d+\z/
      private_constant :LABEL_QUOTES, :LABEL_OWNER, :TEMPLATE_NUMBERS

      # file:method of a frame, the same on every Ruby version.
      def normalize_frame(frame)
        path, label = frame.split(/:\d+:in /, 2)
        "#{File.basename(path.to_s)}:#{method_name(label)}"
      end

      # The method a backtrace label names, without the owner Ruby 3.4 adds:
      # the same on every Ruby version.
      def method_name(label)
        method_label(label).sub(LABEL_OWNER, "")
      end

      # The method a backtrace label names, without quotes or Ruby's "block
      # in" decorations, nor the per-process numbers of a compiled template;
      # the top level of any file is <top>.
      def method_label(label)
        label = label.to_s.gsub(LABEL_QUOTES, "").sub(/\A(?:(?:block|rescue|ensure)(?: \(\d+ levels\))? in )+/, "")
        label = label.sub(TEMPLATE_NUMBERS, '\\1')
        ["<main>", "<top (required)>"].include?(label) ? "<top>" : label
      end

      # A frame of a method of ruzzy's own written in C (a comparison hook,
      # a bug detector's wrapper), which carries its caller's file and line:
      # Ruby 3.4 names its owner ('Ruzzy::CompareHooks::StringConversionHooks#to_i').
      OWN_C_METHOD = /:in 'Ruzzy::[\w:]+[#.][^']*'\z/
      private_constant :OWN_C_METHOD

      # The frames of +backtrace+ above the fuzzing machinery: everything from
      # ruzzy's own `_fuzz` frame down is the harness's start-up, the same for
      # every finding, and is left out, as are ruzzy's own frames (the fuzz
      # test wrapper, the hooks), unless the target is all ruzzy's own
      # (Ruzzy.dummy). A method the hooks wrap shows one frame, as it does
      # without ruzzy: before Ruby 3.4 the hook's frame is the same text as
      # the method's, and a frame the same as the one inside it is left out
      # (so is a C method calling itself on one line: Array#inspect of
      # nested Arrays). The native side
      # (ext/ruzzy/src/findings/ruby_backtrace.rs) applies the same rule to
      # ruzzy's files and `_fuzz` for frames read in a signal handler.
      def target_frames(backtrace)
        above = backtrace.first(backtrace.index { _1.match?(/in [`'](?:Ruzzy::Native\.)?_fuzz'\z/) } || backtrace.size)
        yours = above.reject { |frame| frame.start_with?(OWN_FILES) || frame.match?(OWN_C_METHOD) }
        (yours.empty? ? above : yours).chunk_while { |inner, outer| inner == outer }.map(&:first)
      end
    end
  end
end

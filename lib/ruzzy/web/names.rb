# frozen_string_literal: true

module Ruzzy
  module Web
    # The names an app's own code mentions: its String literals that look
    # like a name, its Symbols and its keyword labels (params[:title],
    # cookies["prefs"], permit(:email), json(error: ...)). Gen.request
    # offers them as the keys of queries, forms, JSON bodies and cookies
    # beside free text, so a key the app looks up is one mutation away
    # instead of a word libFuzzer must learn from comparisons (which a
    # framework's own comparisons crowd out of its tables).
    #
    # Invariant: the list depends only on the files' contents (read in
    # sorted order, ranked by how often each name appears, ties in the order
    # found), so every process of a campaign decodes one input into
    # the same request; an edit to the app may change what an old input
    # decodes into, as a new route does.
    module Names
      # A name: what a key or cookie is called (letters, digits, _ - . and
      # the [] of Rails' nested form keys).
      NAME = /\A[A-Za-z_][\w\-.\[\]]{0,39}\z/
      # A quoted literal, a Symbol (not a ::Constant) and a keyword label.
      QUOTED = /["']([A-Za-z_][\w\-.\[\]]{0,39})["']/
      SYMBOL = /(?<![:\w]):([A-Za-z_]\w{0,39})/
      LABEL = /(?<![:\w])([A-Za-z_]\w{0,39}):(?=\s)/
      # A line that is a comment (its words are prose, not names).
      COMMENT = /^[ \t]*#.*$/
      # Folders of a Rails application that hold its code.
      RAILS_FOLDERS = %w[app lib config].freeze
      # Folders that hold no code the app runs on a request.
      SKIPPED = %w[.git .bundle vendor node_modules tmp log coverage test spec db public storage].freeze
      # The most files read and names kept (Gen.from's two-byte index).
      MAX_FILES = 2000
      MAX_NAMES = 4096
      # Names too common to be worth a choice: Ruby's own words.
      KEYWORDS = %w[if unless else elsif end do def class module return true false nil self then begin rescue
                    ensure yield and or not when case while until].freeze

      module_function

      # The names of the code of the frameworks' apps loaded in this process
      # (Rails.root's app, lib and config; each Sinatra app's root) and of
      # the folders +dirs+.
      def discover(dirs = [])
        of(framework_dirs + dirs)
      end

      # The names mentioned in the Ruby files under +dirs+ (a Rails root
      # is read in app/, lib/ and config/).
      def of(dirs)
        texts = files(dirs.map { |dir| File.expand_path(dir.to_s) }.uniq).map { |path| read(path) }
        ranked(texts)
      end

      # The names of the code that answers a route: +code+, a Method,
      # UnboundMethod or Proc (a controller's action, a Sinatra route's
      # block), its own lines first, then, with +file+, the rest of its
      # file's (a controller's helpers and strong parameters). Empty when
      # its source cannot be read (a method defined in C or by eval).
      def of_code(code, file: false)
        path, first = code.source_location
        return [] unless path.is_a?(String) && File.file?(path)

        lines = read(path).lines
        last = last_line(code) || first
        own = ranked([lines[(first - 1)..(last - 1)].to_a.join])
        file ? (own + ranked([lines.join])).uniq : own
      rescue StandardError
        []
      end

      # The names in +texts+ (Ruby source), ranked by how often they
      # appear, ties in the order found.
      def ranked(texts)
        counts = Hash.new(0)
        texts.each do |text|
          text = text.gsub(COMMENT, "")
          [QUOTED, SYMBOL, LABEL].each { |pattern| text.scan(pattern) { |(name)| counts[name] += 1 } }
        end
        counts.reject! { |name, _| KEYWORDS.include?(name) || !name.match?(NAME) }
        sorted = counts.each_with_index.sort_by { |(_, count), first| [-count, first] }
        sorted.first(MAX_NAMES).map { |(name, _), _| name }
      end

      # The last line of +code+'s source, from its instruction sequence
      # (CRuby's), or nil.
      def last_line(code)
        return nil unless defined?(RubyVM::InstructionSequence)

        RubyVM::InstructionSequence.of(code)&.to_a&.dig(4, :code_location, 2)
      end

      # Header names among +names+: "X-Api-Key" as it is, Rack's
      # "HTTP_X_API_KEY" as "X-Api-Key".
      def headers(names)
        names.filter_map do |name|
          case name
          when /\AHTTP_[A-Z0-9_]+\z/ then name.delete_prefix("HTTP_").split("_").map(&:capitalize).join("-")
          when /\A[A-Z][A-Za-z0-9]*(-[A-Z][A-Za-z0-9]*)+\z/ then name
          end
        end.uniq
      end

      def framework_dirs
        dirs = []
        if defined?(::Rails) && ::Rails.respond_to?(:application) && ::Rails.application && ::Rails.respond_to?(:root)
          dirs << ::Rails.root.to_s
        end
        if defined?(::Sinatra::Base)
          apps = ObjectSpace.each_object(Class).select { |klass| klass < ::Sinatra::Base && klass.routes.any? }
          dirs.concat(apps.filter_map { |app| app.settings.root if app.settings.respond_to?(:root) })
        end
        dirs.compact.map(&:to_s)
      rescue StandardError
        dirs
      end

      # The Ruby files of +dirs+, sorted, at most MAX_FILES.
      def files(dirs)
        found = []
        dirs.each do |dir|
          next unless File.directory?(dir)

          roots = rails_root?(dir) ? RAILS_FOLDERS.map { |folder| File.join(dir, folder) } : [dir]
          roots.select { |root| File.directory?(root) }.each { |root| walk(root, found) }
        end
        found.uniq.sort.first(MAX_FILES)
      end

      # Find is required here, not when ruzzy loads (see Session#uri).
      def walk(root, found)
        require "find"
        Find.find(root) do |path|
          if File.directory?(path)
            Find.prune if path != root && SKIPPED.include?(File.basename(path))
          elsif path.end_with?(".rb", ".ru")
            found << path
          end
          Find.prune if found.size > MAX_FILES * 2
        end
      end

      def rails_root?(dir) = File.file?(File.join(dir, "config", "environment.rb"))

      def read(path)
        File.open(path, "rb") { |file| file.read(1 << 20).to_s }
      rescue SystemCallError
        ""
      end
    end
  end
end

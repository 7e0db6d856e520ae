# frozen_string_literal: true

require_relative "../guidance"

module Ruzzy
  module Web
    # Paths the app's responses named (redirects, links, forms), offered
    # back to libFuzzer: each request's path is reported as compared with
    # one of them (Ruzzy.guide_equal), so libFuzzer writes that path into
    # the next inputs where the request's path was. This is how an app
    # with no declared routes (a bare Rack app) has its paths found.
    #
    # Invariant: only guidance depends on what was learnt, never how an
    # input decodes, so an input means the same request in every process.
    class Links
      # How many paths are kept (the first ones seen).
      KEPT = 64
      # How much of a body is searched for links.
      SEARCHED = 65_536
      # Links and forms in a page, and the path of a redirect.
      LINK = %r{(?:href|action)=["'](/[^"'#?\s]*)}
      LOCATION = %r{\A(?:https?://[^/]+)?(/[^?#\s]*)}
      # The comparison site of the reports (Ruzzy.guide_equal's id).
      GUIDE_ID = 0x7765_6201

      def initialize
        @paths = []
        @turn = 0
      end

      # Learns the paths +response+ (a Response) names.
      def learn(response)
        return if @paths.size >= KEPT

        location = response.headers&.find { |key, _| key.to_s.casecmp?("location") }&.last
        keep(location.to_s[LOCATION, 1]) if location
        body = response.body.to_s
        body[0, SEARCHED].scan(LINK) { |(path)| keep(path) } if body.include?("=\"/") || body.include?("='/")
      end

      # Reports the path of +request+ as compared with a learnt one (each
      # in turn), when the extension is loaded (fuzzing; not a test suite's
      # ordinary run).
      def guide(request)
        return if @paths.empty? || !request.path.is_a?(String) || !Native.respond_to?(:_guide_equal_at)

        @turn = (@turn + 1) % @paths.size
        Guidance.guide_equal(request.path, @paths[@turn], GUIDE_ID)
      end

      private

      def keep(path)
        @paths << path if path && path.size > 1 && @paths.size < KEPT && !@paths.include?(path)
      end
    end
  end
end

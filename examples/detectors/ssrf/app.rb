# frozen_string_literal: true

require "net/http"
require "socket"
require "uri"

# A link preview service: fetches a page and shows its <title>, as chat
# apps do for the links people post.
class LinkPreview
  # The errors a fetch that fails raises.
  FETCH_ERRORS = [URI::Error, SocketError, SystemCallError, IOError, Net::ProtocolError, Net::OpenTimeout,
                  Net::ReadTimeout, ArgumentError, OpenSSL::SSL::SSLError].freeze

  # +pages+: the origin (a URI) of the site whose pages this service
  # previews safely.
  def initialize(pages)
    @pages = pages
  end

  # Vulnerable: any http(s) URL is fetched, an internal address or a
  # cloud metadata service included.
  def title(url)
    uri = URI(url)
    return unless uri.is_a?(URI::HTTP) && uri.host && !uri.host.empty?

    page_title(get(uri))
  rescue *FETCH_ERRORS
    nil
  end

  # Safe: the input only chooses a page of the one site.
  def title_of_page(name)
    page_title(get(URI.join(@pages, "/pages/#{URI.encode_www_form_component(name)}")))
  rescue *FETCH_ERRORS
    nil
  end

  private

  def get(uri)
    Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == "https", open_timeout: 1, read_timeout: 1) do |http|
      http.get(uri.request_uri).body
    end
  end

  def page_title(html)
    html.to_s[%r{<title>([^<]*)</title>}, 1]
  end
end

# The site whose pages are previewed: a server on 127.0.0.1 that answers
# every request with a small page, in a thread of the fuzzing process.
class PageServer
  attr_reader :origin, :port

  def initialize
    @server = TCPServer.new("127.0.0.1", 0)
    @port = @server.addr[1]
    @origin = URI("http://127.0.0.1:#{@port}/")
    Thread.new { loop { answer(@server.accept) } }
  end

  private

  def answer(client)
    request = client.gets.to_s
    nil while (line = client.gets) && line != "\r\n"
    page = "<html><title>#{request.split[1]}</title></html>"
    client.write("HTTP/1.1 200 OK\r\nContent-Length: #{page.bytesize}\r\nConnection: close\r\n\r\n#{page}")
  rescue IOError, SystemCallError
    nil
  ensure
    client.close
  end
end

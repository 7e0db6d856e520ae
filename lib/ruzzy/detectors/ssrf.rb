# frozen_string_literal: true

require_relative "report"
require_relative "../native"

module Ruzzy
  module Detectors
    # Server-side request forgery: a network connection opened while
    # fuzzing to a destination the harness did not allow with
    # Detectors.allow_network, reported before it is made. Ruby's sockets
    # are checked before a host name is even resolved: TCPSocket.new and
    # open, Socket.tcp (Net::HTTP, open-uri and Faraday's default adapter
    # go through one of them), Socket#connect and connect_nonblock
    # (Addrinfo#connect), UDPSocket#connect and #send to a host. C code's
    # TCP connections meet a backstop in libc's connect (the extensions
    # loaded when fuzzing starts, and those loaded later from the end of
    # the input that loaded them; ext/ruzzy/src/detectors/connect_guard.rs),
    # which refuses them. Connections made before fuzzing starts (set-up)
    # are not checked; UNIX-domain sockets are not network connections here.
    class SSRF < Report
      NAME = :ssrf
      SUMMARY = "network connections the harness did not allow (Ruzzy::Detectors.allow_network)"

      # An allowed destination: host (nil: any; an IPAddr: that address or
      # range; a String: that name or address) and port (nil: any); a
      # name's addresses as resolved when it was allowed.
      Rule = Struct.new(:host, :port, :addresses)

      class << self
        def install
          load_sockets
          Detectors.hook(TCPSocket, "TCPSocket.", %i[initialize], ->(sink, args) { check_host(sink, args[0], args[1]) })
          Socket.singleton_class.prepend(resolving_hooks)
          Detectors.hook(Socket, "Socket#", %i[connect connect_nonblock], lambda { |sink, args|
                                                                            check_address(sink, args[0])
                                                                          })
          Detectors.hook(UDPSocket, "UDPSocket#", %i[connect], ->(sink, args) { check_host(sink, args[0], args[1]) })
          Detectors.hook(UDPSocket, "UDPSocket#", %i[send], ->(sink, args) { check_send(sink, args) })
          @backstop = Ruzzy::Native._guard_connect
          rules.each { |rule| allow_native(rule) }
          @installed = true
        end

        # Socket.tcp resolves the host before it connects: it is checked
        # first. (Defined by socket.rb, which may be loaded later: the hook
        # is there before it.)
        def resolving_hooks
          Module.new do
            def tcp(host, port, *rest, **options, &)
              SSRF.check_host("Socket.tcp", host, port)
              super
            end
          end
        end

        # Whether C code's connections are checked (false where the
        # backstop cannot be installed: an architecture it does not know).
        def backstop?
          !@backstop.nil?
        end

        # Allows connections to +host+ on +port+ (see Detectors.allow_network).
        def allow(host, port)
          load_sockets
          host = normalize_host(host)
          rule = Rule.new(host, normalize_port(port, "port"), host.is_a?(String) ? resolve(host) : [])
          rules << rule
          allow_native(rule) if @installed
          rule
        end

        def rules
          @rules ||= []
        end

        # Checks a connection to +host+ (a name or address) on +port+.
        def check_host(sink, host, port)
          host = host.to_s
          port = normalize_port(port, nil)
          return if allowed?(host, port)

          sink = sink.sub(/initialize\z/, "new")
          Detectors.report(new("server-side request forgery: #{sink} would connect to #{destination(host, port)}, " \
                               "a destination the harness did not allow (Ruzzy::Detectors.allow_network)", sink))
        end

        # Checks a connection to +address+ (an Addrinfo or a packed sockaddr).
        def check_address(sink, address)
          address = Addrinfo.new(address) if address.is_a?(String)
          return unless address.is_a?(Addrinfo) && address.ip?

          check_host(sink, address.ip_address, address.ip_port)
        rescue ArgumentError, SocketError, TypeError
          nil
        end

        # The finding for a TCP connection to +address+ (network-order
        # bytes) on +port+ that C code tried and the backstop refused.
        def native_connect(address, port)
          host = address.bytesize == 4 ? address.unpack("C4").join(".") : address.unpack("n8").map { _1.to_s(16) } * ":"
          finding = new("server-side request forgery: native code called connect() to #{destination(host, port)}, a " \
                        "destination the harness did not allow (Ruzzy::Detectors.allow_network); refused", "connect()")
          finding.set_backtrace([])
          finding
        end

        private

        # Ruby's socket classes without socket.rb's Ruby code, which a
        # target that uses sockets loads itself, after ruzzy starts
        # measuring coverage (socket.rb reopens the same classes, under
        # the hooks).
        def load_sockets
          require "socket.so"
        end

        # UDPSocket#send(message, flags, host, port) or (message, flags, sockaddr).
        def check_send(sink, args)
          if args.length >= 4
            check_host(sink, args[2], args[3])
          elsif args.length == 3
            check_address(sink, args[2])
          end
        end

        def allowed?(host, port)
          address = numeric(host)
          name = host.downcase.chomp(".")
          rules.any? do |rule|
            next false unless rule.port.nil? || rule.port == port

            case rule.host
            when nil then true
            when String then rule.host == name || (address && rule.addresses.include?(address.ip_address))
            else address && rule.host.include?(IPAddr.new(address.ip_address))
            end
          end
        end

        def destination(host, port)
          host.include?(":") ? "[#{host}]:#{port}" : "#{host}:#{port}"
        end

        # +host+ as an Addrinfo if it is an IP address (never resolved), or nil.
        def numeric(host)
          Addrinfo.getaddrinfo(host, nil, nil, :STREAM, nil, Socket::AI_NUMERICHOST).first
        rescue SocketError, ArgumentError, TypeError
          nil
        end

        # A String host as compared: an address in its canonical form, a
        # name in lower case.
        def normalize_host(host)
          return host if host.nil? || (defined?(IPAddr) && host.is_a?(IPAddr))
          unless host.is_a?(String)
            raise ArgumentError, "allow_network: host: must be a String, an IPAddr or nil, not #{host.class}"
          end

          numeric(host)&.ip_address || host.downcase.chomp(".")
        end

        # +port+ as an Integer (a service name is looked up); nil stays nil.
        # +option+ names the argument in errors (nil: no errors, unknown
        # ports match no rule).
        def normalize_port(port, option)
          return port if port.nil? || (port.is_a?(Integer) && port.between?(0, 65_535))
          return Integer(port, 10) if port.is_a?(String) && port.match?(/\A\d+\z/)
          return Socket.getservbyname(port) if port.is_a?(String)

          raise ArgumentError, "allow_network: #{option}: must be an Integer from 0 to 65535 or a service" if option

          port
        rescue SocketError
          raise ArgumentError, "allow_network: #{option}: unknown service #{port.inspect}" if option

          port
        end

        # Tells the backstop about +rule+: its addresses, any address for a
        # nil host.
        def allow_native(rule)
          port = rule.port || 0
          native_addresses(rule).each do |family, bytes, prefix|
            next if Ruzzy::Native._allow_connect(family, bytes, prefix, port)

            warn "WARNING: ruzzy: the ssrf detector's backstop holds no more allowed destinations; " \
                 "C code's connections to #{rule.host}:#{port} will be reported"
          end
        end

        # [family (4 or 6), network-order bytes, prefix length] for each
        # address +rule+ allows.
        def native_addresses(rule)
          return [[4, "\0" * 4, 0], [6, "\0" * 16, 0]] if rule.host.nil?
          return [[rule.host.ipv4? ? 4 : 6, rule.host.hton, rule.host.prefix]] unless rule.host.is_a?(String)

          rule.addresses.filter_map do |address|
            info = numeric(address)
            next unless info

            info.ipv4? ? [4, info.to_sockaddr.byteslice(4, 4), 32] : [6, info.to_sockaddr.byteslice(8, 16), 128]
          end
        end

        # The addresses +host+ (a name or an address) stands for now.
        def resolve(host)
          return [host] if numeric(host)

          Addrinfo.getaddrinfo(host, nil, nil, :STREAM).map(&:ip_address).uniq
        rescue SocketError
          []
        end
      end
    end
  end
end

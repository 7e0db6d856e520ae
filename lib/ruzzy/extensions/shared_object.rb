# frozen_string_literal: true

require_relative "../error"

module Ruzzy
  module Extensions
    # What a compiled extension (an ELF64 little-endian shared object, as on
    # x86_64 and aarch64 Linux) says about how it was built: the names in its dynamic
    # symbol table (an instrumented object calls into the sanitizer runtime
    # and SanitizerCoverage through them) and the compiler lines of its
    # .comment section. Reads the section headers and those two sections
    # only; anything that is not such a file raises NotSharedObject.
    class SharedObject
      # Raised for a file this class cannot read as a shared object.
      class NotSharedObject < StandardError
        include Ruzzy::Error
      end

      MAGIC = "\x7FELF".b
      HEADER = 64
      SECTION_HEADER = 64
      SYMBOL = 24
      DYNSYM = 11

      Section = Struct.new(:name_offset, :type, :offset, :bytes, :link)
      # The ELF machines (e_machine) of the architectures ruzzy runs on.
      MACHINES = { 62 => "x86_64", 183 => "aarch64" }.freeze
      # The running program: where the machine this process runs on is read.
      SELF = "/proc/self/exe"

      # The ELF machine +path+ was built for (e_machine), or nil when it is
      # not a 64-bit little-endian ELF file or cannot be read.
      def self.machine(path)
        header = File.binread(path, 20)
        header.unpack1("@18S<") if header && header.bytesize == 20 && elf64_le?(header)
      rescue SystemCallError, IOError
        nil
      end

      # What is wrong with +path+ as code for this process ("built for
      # x86_64, not for this aarch64 machine"), or nil when it is an ELF file
      # for this machine or not one at all (nothing to say).
      def self.other_machine(path)
        theirs = machine(path)
        ours = machine(SELF)
        return if theirs.nil? || ours.nil? || theirs == ours

        theirs, ours = [theirs, ours].map { |machine| MACHINES.fetch(machine) { "ELF machine #{machine}" } }
        "built for #{theirs}, not for this #{ours} machine"
      end

      # Whether +header+ starts a 64-bit little-endian ELF file.
      def self.elf64_le?(header)
        header.start_with?(MAGIC) && header.getbyte(4) == 2 && header.getbyte(5) == 1
      end

      def initialize(path)
        @path = path
        File.open(path, "rb") do |file|
          @file = file
          read_sections
          @symbols = read_symbols
          @comments = read_comments
        end
      rescue SystemCallError, IOError => e
        raise NotSharedObject, "#{path}: #{e.message}"
      ensure
        @file = nil
      end

      attr_reader :path

      # Names in the dynamic symbol table (defined and undefined).
      attr_reader :symbols

      # The .comment strings: one per compiler that produced its objects
      # ("Debian clang version 14.0.6", "GCC: (Debian 12.2.0-14) 12.2.0").
      attr_reader :comments

      private

      def read_sections
        header = read(0, HEADER)
        raise NotSharedObject, "#{@path}: not an ELF file" unless header.start_with?(MAGIC)
        raise NotSharedObject, "#{@path}: not a 64-bit little-endian ELF file" unless self.class.elf64_le?(header)

        offset, = header.unpack("@40Q<")
        entry, count, names = header.unpack("@58S<S<S<")
        raise NotSharedObject, "#{@path}: no section headers" if offset.zero? || count.zero? || entry < SECTION_HEADER

        @sections = Array.new(count) do |index|
          fields = read(offset + (index * entry), SECTION_HEADER).unpack("L<L<Q<Q<Q<Q<L<")
          Section.new(fields[0], fields[1], fields[4], fields[5], fields[6])
        end
        @section_names = @sections[names] && read_section(@sections[names])
      end

      def read_symbols
        table = @sections.find { |section| section.type == DYNSYM }
        return [] unless table && @sections[table.link]

        strings = read_section(@sections[table.link])
        data = read_section(table)
        (0...(data.bytesize / SYMBOL)).filter_map do |index|
          name = data.unpack1("@#{index * SYMBOL}L<")
          name.zero? ? nil : c_string(strings, name)
        end
      end

      def read_comments
        section = @section_names && @sections.find { |s| c_string(@section_names, s.name_offset) == ".comment" }
        return [] unless section

        read_section(section).split("\0").reject(&:empty?)
      end

      def read_section(section)
        read(section.offset, section.bytes)
      end

      def read(offset, size)
        @file.seek(offset)
        data = @file.read(size) || "".b
        raise NotSharedObject, "#{@path}: truncated ELF file" if data.bytesize < size

        data
      end

      def c_string(table, offset)
        table.byteslice(offset, (table.index("\0", offset) || table.bytesize) - offset).to_s
      end
    end
  end
end

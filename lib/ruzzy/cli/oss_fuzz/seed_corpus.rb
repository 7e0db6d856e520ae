# frozen_string_literal: true

require "zlib"

module Ruzzy
  class OssFuzz
    # Writes NAME_seed_corpus.zip, the form in which OSS-Fuzz and
    # ClusterFuzzLite take a target's seed corpus: a flat ZIP archive of the
    # corpus files (deflated), written with Zlib alone so a build image needs
    # no zip tool. Paths inside are relative to the corpus directory.
    module SeedCorpus
      # ZIP's "version needed to extract" for deflate (2.0).
      VERSION = 20
      DEFLATE = 8
      # MS-DOS time and date of every entry: 1980-01-01 00:00, so the same
      # corpus always makes the same archive.
      DOS_TIME = 0
      DOS_DATE = (1 << 5) | 1

      module_function

      # Archives the files below +directory+ into +zip_path+; returns how
      # many were written.
      def write(directory, zip_path)
        names = Dir.glob("**/*", File::FNM_DOTMATCH, base: directory)
                   .select { |name| File.file?(File.join(directory, name)) }.sort
        entries = []
        File.open(zip_path, "wb") do |zip|
          names.each { |name| entries << write_entry(zip, name, File.binread(File.join(directory, name))) }
          central = zip.pos
          entries.each { |entry| zip.write(central_header(entry)) }
          zip.write(end_record(entries.size, zip.pos - central, central))
        end
        entries.size
      end

      def write_entry(zip, name, data)
        deflater = Zlib::Deflate.new(Zlib::DEFAULT_COMPRESSION, -Zlib::MAX_WBITS)
        packed = deflater.deflate(data, Zlib::FINISH)
        deflater.close
        entry = { name: name.b, crc: Zlib.crc32(data), size: data.bytesize, packed: packed.bytesize, offset: zip.pos }
        zip.write([0x04034b50, VERSION, 0, DEFLATE, DOS_TIME, DOS_DATE, entry[:crc], entry[:packed], entry[:size],
                   entry[:name].bytesize, 0].pack("VvvvvvVVVvv"), entry[:name], packed)
        entry
      end

      def central_header(entry)
        [0x02014b50, VERSION, VERSION, 0, DEFLATE, DOS_TIME, DOS_DATE, entry[:crc], entry[:packed], entry[:size],
         entry[:name].bytesize, 0, 0, 0, 0, 0, entry[:offset]].pack("VvvvvvvVVVvvvvvVV") + entry[:name]
      end

      def end_record(count, size, offset)
        [0x06054b50, 0, 0, count, count, size, offset, 0].pack("VvvvvVVv")
      end
    end
  end
end

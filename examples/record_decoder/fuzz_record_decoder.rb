# frozen_string_literal: true

# Fuzzes RecordDecoder, whose string tables are decoded by a C extension.
# Build the extension with AddressSanitizer first (docs/c-extensions.md):
#
#   ruzzy build-ext examples/record_decoder
#   cd examples/record_decoder && ruzzy --sanitizer=address fuzz_record_decoder.rb -seed=1
#
# Reaching the bug takes Ruby-side coverage and comparisons (the magic, the
# version, the record type) and C-side ones (the packed mode byte); the
# report is an AddressSanitizer heap-buffer-overflow in decode_packed.

$LOAD_PATH.unshift(File.join(__dir__, "lib"))
require "ruzzy"
require "record_decoder"

Ruzzy.fuzz(lambda do |data|
  RecordDecoder.decode(data)
  nil
rescue RecordDecoder::FormatError
  nil # malformed input is expected
end)

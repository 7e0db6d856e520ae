/*
 * RecordDecoder::Native.strings(payload): decodes the string table of a
 * record file. Payload: count (1 byte), mode (1 byte), then entries.
 *
 *   mode 0x00: each entry is a 2-byte little-endian length and its bytes
 *   mode 0xA5: "packed", each entry is a 1-byte length and its bytes
 *
 * The packed decoder has a bug: it checks that the *length byte* is inside
 * the buffer, not that the entry's bytes are, and reads past the end of the
 * heap buffer (AddressSanitizer: heap-buffer-overflow).
 */
#include <ruby.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static VALUE entry(const uint8_t *bytes, size_t len) {
  char *copy = malloc(len + 1);
  memcpy(copy, bytes, len);
  VALUE string = rb_str_new(copy, (long)len);
  free(copy);
  return string;
}

static void decode_packed(const uint8_t *buf, size_t size, unsigned count, VALUE out) {
  size_t pos = 2;
  for (unsigned i = 0; i < count; i++) {
    if (pos >= size) break;
    size_t len = buf[pos++];
    /* BUG: should be `if (pos + len > size) break;` */
    rb_ary_push(out, entry(buf + pos, len));
    pos += len;
  }
}

/* Returns NULL, or what is wrong with the table. */
static const char *decode_plain(const uint8_t *buf, size_t size, unsigned count, VALUE out) {
  size_t pos = 2;
  for (unsigned i = 0; i < count; i++) {
    if (pos + 2 > size) return "truncated string table";
    size_t len = (size_t)buf[pos] | ((size_t)buf[pos + 1] << 8);
    pos += 2;
    if (pos + len > size) return "truncated string table entry";
    rb_ary_push(out, entry(buf + pos, len));
    pos += len;
  }
  return NULL;
}

static VALUE native_strings(VALUE self, VALUE payload) {
  (void)self;
  StringValue(payload);
  size_t size = (size_t)RSTRING_LEN(payload);
  if (size < 2) rb_raise(rb_eArgError, "string table too short");

  /* Work on a heap copy of exactly the payload's size, as real decoders do. */
  uint8_t *buf = malloc(size);
  memcpy(buf, RSTRING_PTR(payload), size);
  unsigned count = buf[0];
  unsigned mode = buf[1];
  const char *error = NULL;
  VALUE out = rb_ary_new();
  if (mode == 0xA5) {
    decode_packed(buf, size, count, out);
  } else if (mode == 0x00) {
    error = decode_plain(buf, size, count, out);
  } else {
    error = "unknown string table mode";
  }
  free(buf);
  if (error) rb_raise(rb_eArgError, "%s", error);
  return out;
}

void Init_record_decoder(void) {
  VALUE decoder = rb_define_module("RecordDecoder");
  VALUE native = rb_define_module_under(decoder, "Native");
  rb_define_module_function(native, "strings", native_strings, 1);
}

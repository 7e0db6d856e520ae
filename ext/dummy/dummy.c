/*
 * Ruzzy.dummy's target: a C extension, built with AddressSanitizer and
 * libFuzzer's coverage instrumentation, with a heap-use-after-free that only
 * the input "HI" reaches. It exists to check an installation in one command:
 *
 *   ruzzy --sanitizer=address -e dummy      (or Ruzzy.dummy under LD_PRELOAD)
 */
#include <ruby.h>
#include <stdlib.h>
#include <string.h>

static int check(const char *data, long size) {
  if (size >= 2 && data[0] == 'H') {
    if (data[1] == 'I') {
      volatile char *buffer = malloc(16);
      buffer[1] = 'x';
      free((void *)buffer);
      return buffer[1]; /* heap-use-after-free */
    }
  }
  return 0;
}

static VALUE dummy_test_one_input(VALUE self, VALUE data) {
  (void)self;
  StringValue(data);
  return INT2FIX(check(RSTRING_PTR(data), RSTRING_LEN(data)) ? 0 : 0);
}

void Init_dummy(void) {
  VALUE ruzzy = rb_define_module("Ruzzy");
  rb_define_module_function(ruzzy, "c_dummy_test_one_input", dummy_test_one_input, 1);
}

/*
 * The preload's default sanitizer options, the runtime's
 * __asan_default_options or __ubsan_default_options (RUZZY_OPTIONS_FUNCTION):
 * RUZZY_DEFAULT_OPTIONS, which ASAN_OPTIONS / UBSAN_OPTIONS override, and
 * where this machine's llvm-symbolizer is.
 *
 * Why the symbolizer: Debian's and Ubuntu's compiler-rt look for the
 * symbolizer of their own LLVM version only (/usr/bin/llvm-symbolizer-19 in
 * a runtime from clang 19). A precompiled gem carries the build machine's
 * runtime, so on a machine with another LLVM, or with llvm-symbolizer
 * elsewhere, the sanitizer printed "invalid path to external symbolizer"
 * and every C frame of a report as a bare address. The first of
 * llvm-symbolizer on PATH, /usr/bin/llvm-symbolizer-N and
 * /usr/lib/llvm-N/bin/llvm-symbolizer (N from newest to oldest) is named
 * instead; with none, the runtime's own choice stands.
 *
 * Invariants: runs while the runtime initialises, before its allocator
 * and its interceptors exist: it allocates nothing, calls only getenv and
 * access of libc (neither intercepted; the string and formatting functions
 * are, and calling one this early crashes), keeps its strings in static
 * storage and is computed once. A directory holding a quote is skipped
 * (the value is quoted for the option parser).
 */
#include <stdlib.h>
#include <unistd.h>

#ifndef RUZZY_OPTIONS_FUNCTION
#error "RUZZY_OPTIONS_FUNCTION names the runtime's default options hook"
#endif
#ifndef RUZZY_DEFAULT_OPTIONS
#error "RUZZY_DEFAULT_OPTIONS is the preload's option string"
#endif

/* The LLVM versions looked for under their versioned names. */
#define RUZZY_LLVM_NEWEST 40
#define RUZZY_LLVM_OLDEST 11

static char ruzzy_options[4096];
static char ruzzy_symbolizer[1024];

/* A string being built in a fixed buffer; full once a byte did not fit. */
struct ruzzy_text {
  char *bytes;
  size_t size, length;
  int full;
};

static void ruzzy_add(struct ruzzy_text *text, const char *from, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (text->length + 1 >= text->size) {
      text->full = 1;
      return;
    }
    text->bytes[text->length++] = from[i];
  }
  text->bytes[text->length] = '\0';
}

static size_t ruzzy_length(const char *string) {
  size_t length = 0;
  while (string[length]) length++;
  return length;
}

static void ruzzy_add_string(struct ruzzy_text *text, const char *string) {
  ruzzy_add(text, string, ruzzy_length(string));
}

static void ruzzy_add_number(struct ruzzy_text *text, int number) {
  char digits[12];
  size_t count = 0;
  do {
    digits[sizeof digits - 1 - count++] = (char)('0' + number % 10);
    number /= 10;
  } while (number > 0 && count < sizeof digits);
  ruzzy_add(text, digits + sizeof digits - count, count);
}

/* Whether PREFIX, NUMBER (when not negative) and SUFFIX name an executable;
 * the name is left in ruzzy_symbolizer. */
static int ruzzy_usable(const char *prefix, size_t prefix_length, int number, const char *suffix) {
  struct ruzzy_text name = {ruzzy_symbolizer, sizeof ruzzy_symbolizer, 0, 0};
  ruzzy_add(&name, prefix, prefix_length);
  if (number >= 0) ruzzy_add_number(&name, number);
  ruzzy_add_string(&name, suffix);
  for (size_t i = 0; i < name.length; i++)
    if (ruzzy_symbolizer[i] == '\'') return 0;
  return !name.full && name.length > 0 && access(ruzzy_symbolizer, X_OK) == 0;
}

static const char *ruzzy_find_symbolizer(void) {
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t length = 0;
    while (path[length] && path[length] != ':') length++;
    if (length > 0 && ruzzy_usable(path, length, -1, "/llvm-symbolizer")) return ruzzy_symbolizer;
    path += length;
    if (*path == ':') path++;
  }
  for (int version = RUZZY_LLVM_NEWEST; version >= RUZZY_LLVM_OLDEST; version--) {
    static const char versioned[] = "/usr/bin/llvm-symbolizer-", directory[] = "/usr/lib/llvm-";
    if (ruzzy_usable(versioned, sizeof versioned - 1, version, "")) return ruzzy_symbolizer;
    if (ruzzy_usable(directory, sizeof directory - 1, version, "/bin/llvm-symbolizer")) return ruzzy_symbolizer;
  }
  return NULL;
}

const char *RUZZY_OPTIONS_FUNCTION(void) {
  if (ruzzy_options[0] == '\0') {
    struct ruzzy_text options = {ruzzy_options, sizeof ruzzy_options, 0, 0};
    const char *symbolizer = ruzzy_find_symbolizer();
    ruzzy_add_string(&options, RUZZY_DEFAULT_OPTIONS);
    if (symbolizer) {
      size_t before = options.length;
      ruzzy_add_string(&options, ":external_symbolizer_path='");
      ruzzy_add_string(&options, symbolizer);
      ruzzy_add_string(&options, "'");
      if (options.full) ruzzy_options[before] = '\0';
    }
  }
  return ruzzy_options;
}

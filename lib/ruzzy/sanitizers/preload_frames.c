/*
 * Linked into ruzzy's sanitizer preloads (asan_with_fuzzer.so,
 * ubsan_with_fuzzer.so) with -Wl,--wrap=__sanitizer_print_stack_trace, so
 * that the preload's libFuzzer calls this wrapper where it would print the
 * native stack after a crash line ("deadly signal", "timeout").
 *
 * ruzzy_ext registers a printer at require time. When the finding is an
 * uncaught Ruby exception, the printer writes its Ruby frames in sanitizer
 * form and returns 1: those are the frames crash-grouping tools
 * (ClusterFuzz) read. Otherwise (a native crash or a hang in C code) the
 * printer writes the Ruby backtrace of the fuzz target, and the native
 * stack follows: from the code the signal interrupted, not from libFuzzer's
 * handler (whose own frames, __sanitizer_print_stack_trace,
 * fuzzer::PrintStackTrace(), fuzzer::Fuzzer::AlarmCallback(), would make
 * the DEDUP_TOKEN of every hang the same). Its DEDUP_TOKEN names the
 * target's innermost native functions, those outside the runtime (this
 * preload, ruzzy_ext, the Ruby interpreter, libc); with none, ruzzy_ext
 * prints the token of the target's Ruby frames. Outside a signal handler
 * (no interrupted frame), the sanitizer's own stack trace is printed.
 *
 * __asan_on_error and __ubsan_on_report, the sanitizers' hooks at the
 * start of a report, let ruzzy_ext print the Ruby backtrace of the fuzz
 * target above the sanitizer's report.
 *
 * Also linked with -Wl,--wrap=__sanitizer_set_death_callback: the death
 * callback libFuzzer installs (it writes the crash file) runs after the
 * one ruzzy_ext registers, which prints the Reproduce and Minimise lines
 * of a sanitizer report that ends the process (UndefinedBehaviorSanitizer
 * has no error report callback of its own, as AddressSanitizer has).
 *
 * Invariant: the wrappers run in signal handlers and dying processes; they
 * only load pointers, walk the stack, write(2), and call the sanitizer's
 * own symbolizer, as the sanitizer's stack trace printer does in the same
 * place. The runtime's address ranges are found at registration (dladdr,
 * dl_iterate_phdr), never in a handler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

typedef int (*ruzzy_frame_printer)(void);

static ruzzy_frame_printer printer;

void __real___sanitizer_print_stack_trace(void);

void ruzzy_preload_set_frame_printer(ruzzy_frame_printer function) {
  __atomic_store_n(&printer, function, __ATOMIC_RELEASE);
}

static int print_interrupted_stack(void);

void __wrap___sanitizer_print_stack_trace(void) {
  ruzzy_frame_printer function = __atomic_load_n(&printer, __ATOMIC_ACQUIRE);
  if (function && function())
    return;
  if (print_interrupted_stack())
    return;
  __real___sanitizer_print_stack_trace();
}

/* The sanitizers' public interface (sanitizer/common_interface_defs.h). */
void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out_buf, size_t out_buf_size);

typedef void (*ruzzy_hook)(void);

/* --- The Ruby backtrace above a sanitizer's report. --- */

static ruzzy_hook report_starts;

void ruzzy_preload_set_report_start(ruzzy_hook function) {
  __atomic_store_n(&report_starts, function, __ATOMIC_RELEASE);
}

static void on_report(void) {
  ruzzy_hook function = __atomic_load_n(&report_starts, __ATOMIC_ACQUIRE);
  if (function)
    function();
}

/* Overrides the runtimes' empty weak definitions. */
void __asan_on_error(void) { on_report(); }
void __ubsan_on_report(void) { on_report(); }

/* --- The native stack from the interrupted code. --- */

#define MAX_RUNTIME_RANGES 32
#define MAX_FRAMES 256
#define MAX_TOKEN_FRAMES 8

/* [start, end) of the runtime's loaded segments, set once at registration. */
static uintptr_t runtime_ranges[MAX_RUNTIME_RANGES][2];
static int runtime_range_count;
static int token_frames;
static ruzzy_hook print_fallback_token;

struct module_search {
  uintptr_t address;
};

/* Adds the segments of the module holding the address searched for (of
 * the main program, the first module listed, when it is 0). */
static int add_module_of(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t address = ((struct module_search *)data)->address;
  int found = address == 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + segment->p_vaddr;
    if (segment->p_type == PT_LOAD && address >= start && address < start + segment->p_memsz)
      found = 1;
  }
  if (!found)
    return 0;
  for (int i = 0; i < info->dlpi_phnum && runtime_range_count < MAX_RUNTIME_RANGES; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD)
      continue;
    uintptr_t start = info->dlpi_addr + segment->p_vaddr;
    runtime_ranges[runtime_range_count][0] = start;
    runtime_ranges[runtime_range_count][1] = start + segment->p_memsz;
    runtime_range_count++;
  }
  return 1;
}

/* ruzzy_ext, before fuzzing: the code of the runtime besides this preload
 * and the main program (ruby) (one address in each of ruzzy_ext, the
 * interpreter, libc), the frames a token holds, and what prints the token
 * of the Ruby frames. */
void ruzzy_preload_set_native_stack(void *const *runtime_code, int count, int frames,
                                    ruzzy_hook fallback_token) {
  struct module_search search = {0};
  dl_iterate_phdr(add_module_of, &search);
  search.address = (uintptr_t)&ruzzy_preload_set_native_stack;
  dl_iterate_phdr(add_module_of, &search);
  for (int i = 0; i < count; i++) {
    search.address = (uintptr_t)runtime_code[i];
    dl_iterate_phdr(add_module_of, &search);
  }
  token_frames = frames < 1 ? 1 : frames > MAX_TOKEN_FRAMES ? MAX_TOKEN_FRAMES : frames;
  __atomic_store_n(&print_fallback_token, fallback_token, __ATOMIC_RELEASE);
}

static int in_runtime(uintptr_t pc) {
  for (int i = 0; i < runtime_range_count; i++)
    if (pc >= runtime_ranges[i][0] && pc < runtime_ranges[i][1])
      return 1;
  return 0;
}

struct walk {
  int started;
  int count;
  uintptr_t pcs[MAX_FRAMES];
};

/* Collects the frames from the one a signal interrupted outwards: its
 * instruction pointer is exact (not a return address), which the unwinder
 * tells by ip_before_insn. */
static _Unwind_Reason_Code collect(struct _Unwind_Context *context, void *data) {
  struct walk *walk = data;
  int exact = 0;
  uintptr_t ip = _Unwind_GetIPInfo(context, &exact);
  if (!walk->started) {
    if (!exact)
      return _URC_NO_REASON;
    walk->started = 1;
    ip += 1; /* symbolized as the instruction before a return address */
  }
  if (ip == 0 || walk->count == MAX_FRAMES)
    return _URC_END_OF_STACK;
  walk->pcs[walk->count++] = ip;
  return _URC_NO_REASON;
}

static void put(const char *text, size_t length) {
  while (length > 0) {
    ssize_t written = write(2, text, length);
    if (written <= 0)
      return;
    text += written;
    length -= (size_t)written;
  }
}

static void put_string(const char *text) { put(text, strlen(text)); }

static void put_number(unsigned number) {
  char digits[16];
  int at = sizeof digits;
  do {
    digits[--at] = (char)('0' + number % 10);
    number /= 10;
  } while (number && at > 0);
  put(digits + at, sizeof digits - (size_t)at);
}

/* The symbolizer writes one NUL-terminated string per (inlined) frame, an
 * empty string after the last. */
static const char *next_string(const char *text, const char *end) {
  const char *next = text + strlen(text) + 1;
  return next < end && *next ? next : NULL;
}

/* Whether a frame's function name is one the symbolizer gives code that
 * is no function of the target's: a PC in a procedure linkage table stub
 * (the jump through which a shared object calls another's function, where
 * a signal may land) has no symbol of its own and is named after the
 * nearest one before it, the object's `_init` (or `_fini`). */
static int is_linker_stub(const char *name) {
  return strcmp(name, "_init") == 0 || strcmp(name, "_fini") == 0;
}

/* Prints the native stack from the frame a signal interrupted, as the
 * sanitizer prints a stack trace, and its DEDUP_TOKEN line; 0 when there
 * is no such frame (not called from a signal handler) or ruzzy_ext
 * registered nothing. */
static int print_interrupted_stack(void) {
  ruzzy_hook fallback = __atomic_load_n(&print_fallback_token, __ATOMIC_ACQUIRE);
  if (!fallback)
    return 0;
  static struct walk walk; /* one report per process: never re-entered */
  walk.started = 0;
  walk.count = 0;
  _Unwind_Backtrace(collect, &walk);
  if (walk.count == 0)
    return 0;
  char token[1024] = "DEDUP_TOKEN: ";
  size_t token_length = strlen(token);
  int named = 0;
  unsigned number = 0;
  for (int i = 0; i < walk.count; i++) {
    char text[2048];
    __sanitizer_symbolize_pc((void *)walk.pcs[i], "%p %F %L", text, sizeof text);
    for (const char *line = text; line; line = next_string(line, text + sizeof text)) {
      put_string("    #");
      put_number(number++);
      put_string(" ");
      put_string(line);
      put_string("\n");
    }
    if (named == token_frames || in_runtime(walk.pcs[i]))
      continue;
    char names[1024];
    __sanitizer_symbolize_pc((void *)walk.pcs[i], "%f", names, sizeof names);
    for (const char *name = names; name && named < token_frames;
         name = next_string(name, names + sizeof names)) {
      size_t length = strlen(name);
      if (length == 0 || strcmp(name, "??") == 0 || strcmp(name, "<null>") == 0 ||
          is_linker_stub(name) || token_length + length + 4 > sizeof token)
        continue;
      if (named++ > 0) {
        memcpy(token + token_length, "--", 2);
        token_length += 2;
      }
      memcpy(token + token_length, name, length);
      token_length += length;
    }
  }
  put_string("\n");
  if (named > 0) {
    token[token_length++] = '\n';
    put(token, token_length);
  } else {
    fallback();
  }
  return 1;
}

typedef void (*ruzzy_death_callback)(void);

static ruzzy_death_callback before_death;
static ruzzy_death_callback engine_death_callback;

void __real___sanitizer_set_death_callback(ruzzy_death_callback callback);

void ruzzy_preload_set_before_death(ruzzy_death_callback function) {
  __atomic_store_n(&before_death, function, __ATOMIC_RELEASE);
}

static void on_death(void) {
  ruzzy_death_callback first = __atomic_load_n(&before_death, __ATOMIC_ACQUIRE);
  ruzzy_death_callback then = __atomic_load_n(&engine_death_callback, __ATOMIC_ACQUIRE);
  if (first)
    first();
  if (then)
    then();
}

void __wrap___sanitizer_set_death_callback(ruzzy_death_callback callback) {
  __atomic_store_n(&engine_death_callback, callback, __ATOMIC_RELEASE);
  __real___sanitizer_set_death_callback(on_death);
}

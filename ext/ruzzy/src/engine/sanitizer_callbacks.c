/*
 * Sanitizer callbacks for the bundled libFuzzer.
 *
 * libFuzzer looks these functions up through weak references; a sanitizer
 * runtime normally provides them. In a pure-Ruby run there is none, so ruzzy
 * provides them here, in C, so that they stay local to ruzzy_ext.so: they
 * serve only the bundled libFuzzer and never interpose on a preloaded
 * sanitizer runtime's own definitions.
 *
 * Invariant: each function is async-signal-tolerant enough for libFuzzer's
 * crash and timeout paths (no allocation here; the Rust side documents what
 * it does).
 */
#include <stddef.h>

void ruzzy_symbolize_pc(void *pc, const char *fmt, char *out, size_t size);
void ruzzy_print_stack_trace(void);
void ruzzy_print_oom_reproduction(void);

void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t size) {
  ruzzy_symbolize_pc(pc, fmt, out, size);
}

void __sanitizer_print_stack_trace(void) { ruzzy_print_stack_trace(); }

/* libFuzzer calls it when the process outgrew -rss_limit_mb, before it
 * writes oom-<sha1>: the place for the Reproduce and Minimise lines. */
void __sanitizer_print_memory_profile(size_t top_percent, size_t max_contexts) {
  (void)top_percent;
  (void)max_contexts;
  ruzzy_print_oom_reproduction();
}

static int crash_state_taken;

int __sanitizer_acquire_crash_state(void) {
  return !__atomic_exchange_n(&crash_state_taken, 1, __ATOMIC_SEQ_CST);
}

void __sanitizer_set_death_callback(void (*callback)(void)) { (void)callback; }

/* Called from Rust so that the linker keeps this object (weak references
 * alone do not pull an archive member in). */
void ruzzy_link_sanitizer_callbacks(void) {}

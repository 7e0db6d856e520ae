/*
 * Linked into ruzzy's sanitizer preloads in front of libFuzzer's hooks for
 * the comparisons and indirect calls of instrumented C code whose only
 * use is libFuzzer's value profile (-use_value_profile=1): 1- and 2-byte
 * comparisons and indirect calls feed nothing else (4- and 8-byte
 * comparisons and switches also feed the table of recent comparisons that
 * mutations draw on, so they are left alone). The copy of libFuzzer's
 * archive in the preload has the hooks listed here (RUZZY_GATED_HOOK
 * lines, which lib/ruzzy/sanitizers/build.rb reads) renamed with the
 * prefix it passes as RUZZY_GATED_PREFIX (objcopy --redefine-sym); each
 * hook here
 * returns at once unless the value profile is on, and otherwise jumps to
 * libFuzzer's (a tail call, so libFuzzer reads the instrumented code's
 * return address as the comparison's PC, as without the gate).
 *
 * ruzzy_ext turns the value profile on with
 * ruzzy_preload_set_value_profile before libFuzzer starts when its flags
 * say -use_value_profile=1 (ext/ruzzy/src/engine/value_profile_gate.rs).
 *
 * Invariant: the hooks run inside every instrumented comparison: they read
 * one flag and allocate, lock and call nothing else.
 */
#include <stdint.h>

#ifndef RUZZY_GATED_PREFIX
#error "RUZZY_GATED_PREFIX must name the prefix of libFuzzer's renamed hooks"
#endif
#define RUZZY_CONCAT_(a, b) a##b
#define RUZZY_CONCAT(a, b) RUZZY_CONCAT_(a, b)
/* libFuzzer's own hook NAME, as renamed in the preload's copy of its archive. */
#define RUZZY_LIBFUZZER(name) RUZZY_CONCAT(RUZZY_GATED_PREFIX, name)

static int value_profile;

void ruzzy_preload_set_value_profile(int on) { __atomic_store_n(&value_profile, on, __ATOMIC_RELAXED); }

#define RUZZY_ON() __builtin_expect(__atomic_load_n(&value_profile, __ATOMIC_RELAXED), 0)

/* A gated comparison hook: two operands of TYPE. */
#define RUZZY_GATED_HOOK(name, type)                                                                   \
  void RUZZY_LIBFUZZER(name)(type, type);                                                              \
  void name(type a, type b) {                                                                          \
    if (RUZZY_ON()) __attribute__((musttail)) return RUZZY_LIBFUZZER(name)(a, b);                      \
  }

/* A gated hook of one argument of TYPE. */
#define RUZZY_GATED_HOOK1(name, type)                                                                  \
  void RUZZY_LIBFUZZER(name)(type);                                                                    \
  void name(type a) {                                                                                  \
    if (RUZZY_ON()) __attribute__((musttail)) return RUZZY_LIBFUZZER(name)(a);                         \
  }

RUZZY_GATED_HOOK(__sanitizer_cov_trace_cmp1, uint8_t)
RUZZY_GATED_HOOK(__sanitizer_cov_trace_const_cmp1, uint8_t)
RUZZY_GATED_HOOK(__sanitizer_cov_trace_cmp2, uint16_t)
RUZZY_GATED_HOOK(__sanitizer_cov_trace_const_cmp2, uint16_t)
RUZZY_GATED_HOOK1(__sanitizer_cov_trace_pc_indir, uintptr_t)

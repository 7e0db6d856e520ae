/*
 * Linked into ruzzy's sanitizer preloads (asan_with_fuzzer.so,
 * ubsan_with_fuzzer.so) with -Wl,--wrap=__sanitizer_print_stack_trace, so
 * that the preload's libFuzzer calls this wrapper where it would print the
 * native stack after a crash line ("deadly signal", "timeout").
 *
 * ruzzy_ext registers a printer at require time. When the finding is an
 * uncaught Ruby exception, the printer writes its Ruby frames in sanitizer
 * form and returns 1: those are the frames crash-grouping tools
 * (ClusterFuzz) read. Otherwise (no printer, or a native crash) the
 * sanitizer's own stack trace is printed, as without the wrapper.
 *
 * Also linked with -Wl,--wrap=__sanitizer_set_death_callback: the death
 * callback libFuzzer installs (it writes the crash file) runs after the
 * one ruzzy_ext registers, which prints the Reproduce and Minimise lines
 * of a sanitizer report that ends the process (UndefinedBehaviorSanitizer
 * has no error report callback of its own, as AddressSanitizer has).
 *
 * Invariant: the wrappers run in signal handlers and dying processes; they
 * only load pointers and call functions that are async-signal-safe
 * themselves.
 */
typedef int (*ruzzy_frame_printer)(void);

static ruzzy_frame_printer printer;

void __real___sanitizer_print_stack_trace(void);

void ruzzy_preload_set_frame_printer(ruzzy_frame_printer function) {
  __atomic_store_n(&printer, function, __ATOMIC_RELEASE);
}

void __wrap___sanitizer_print_stack_trace(void) {
  ruzzy_frame_printer function = __atomic_load_n(&printer, __ATOMIC_ACQUIRE);
  if (function && function())
    return;
  __real___sanitizer_print_stack_trace();
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

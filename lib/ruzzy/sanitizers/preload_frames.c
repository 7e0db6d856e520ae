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
 * Invariant: the wrapper runs in signal handlers; it only loads a pointer
 * and calls functions that are async-signal-safe themselves.
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

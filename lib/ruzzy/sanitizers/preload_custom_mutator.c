/*
 * Linked into ruzzy's sanitizer preloads (asan_with_fuzzer.so,
 * ubsan_with_fuzzer.so): libFuzzer's custom mutator and crossover hooks for
 * the preload's libFuzzer, so that a harness's Ruby mutator and a typed
 * target's structure-aware mutator work under a sanitizer too.
 *
 * The preload's libFuzzer looks these hooks up when the preload loads,
 * long before ruzzy_ext exists, so they are defined here and forward to
 * the functions ruzzy_ext hands over before the driver starts
 * (ruzzy_preload_set_custom_mutators). Their mere presence changes
 * libFuzzer's behaviour (it then mutates only through them and turns
 * -len_control off), so LLVMFuzzerInitialize, which libFuzzer calls right
 * after recording their addresses, erases from libFuzzer's table those not
 * handed over (fuzzer::EF: Initialize, CustomMutator, CustomCrossOver are
 * its first three entries, FuzzerExtFunctions.def), as
 * ext/ruzzy/src/input/custom_mutator.c does for the bundled libFuzzer.
 *
 * Invariant: the functions are set once, before libFuzzer starts, and
 * only read afterwards.
 */
#include <stddef.h>
#include <stdint.h>

typedef size_t (*ruzzy_mutator)(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
typedef size_t (*ruzzy_crossover)(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                  uint8_t *out, size_t max_out_size, unsigned int seed);

static ruzzy_mutator mutator;
static ruzzy_crossover crossover;

extern void *_ZN6fuzzer2EFE; /* fuzzer::EF, an ExternalFunctions * */

void ruzzy_preload_set_custom_mutators(ruzzy_mutator new_mutator, ruzzy_crossover new_crossover) {
  __atomic_store_n(&mutator, new_mutator, __ATOMIC_RELEASE);
  __atomic_store_n(&crossover, new_crossover, __ATOMIC_RELEASE);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return __atomic_load_n(&mutator, __ATOMIC_ACQUIRE)(data, size, max_size, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed) {
  return __atomic_load_n(&crossover, __ATOMIC_ACQUIRE)(data1, size1, data2, size2, out, max_out_size, seed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  void **functions = (void **)_ZN6fuzzer2EFE;
  if (functions) {
    if (!__atomic_load_n(&mutator, __ATOMIC_ACQUIRE)) functions[1] = NULL;
    if (!__atomic_load_n(&crossover, __ATOMIC_ACQUIRE)) functions[2] = NULL;
  }
  return 0;
}

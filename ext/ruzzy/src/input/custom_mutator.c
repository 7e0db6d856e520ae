/*
 * libFuzzer's custom mutator and crossover hooks, for the bundled libFuzzer.
 *
 * libFuzzer finds LLVMFuzzerCustomMutator / LLVMFuzzerCustomCrossOver
 * through weak references resolved when this library loads, so they always
 * exist here. Their mere presence changes libFuzzer's behaviour (it then
 * mutates only through them and turns -len_control off), so
 * LLVMFuzzerInitialize, which libFuzzer calls right after recording those
 * addresses, erases the ones not wanted (no Ruby mutator or crossover, and
 * not a typed target, whose structure-aware mutator fills both) from libFuzzer's
 * table (fuzzer::EF: Initialize, CustomMutator, CustomCrossOver are its
 * first three entries, FuzzerExtFunctions.def).
 *
 * Like sanitizer_callbacks.c, these symbols stay local to ruzzy_ext.so.
 */
#include <stddef.h>
#include <stdint.h>

size_t ruzzy_custom_mutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t ruzzy_custom_crossover(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                              uint8_t *out, size_t max_out_size, unsigned int seed);
int ruzzy_wants_custom_mutator(void);
int ruzzy_wants_custom_crossover(void);

extern void *_ZN6fuzzer2EFE; /* fuzzer::EF, an ExternalFunctions * */

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return ruzzy_custom_mutator(data, size, max_size, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed) {
  return ruzzy_custom_crossover(data1, size1, data2, size2, out, max_out_size, seed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  void **functions = (void **)_ZN6fuzzer2EFE;
  if (functions) {
    if (!ruzzy_wants_custom_mutator()) functions[1] = NULL;
    if (!ruzzy_wants_custom_crossover()) functions[2] = NULL;
  }
  return 0;
}

void ruzzy_link_custom_mutator(void) {}

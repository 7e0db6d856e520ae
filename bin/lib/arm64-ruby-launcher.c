/*
 * ROOT/usr/bin/rubyX.Y, built by bin/arm64 setup: runs ROOT's rubyX.Y.aarch64 under qemu
 * with the root's rbconfig.rb (docs/platforms.md, "How an arm64 program starts another").
 * A program, not a script: a sanitizer preload in LD_PRELOAD (an aarch64 file) would make
 * the host's dynamic loader complain, for /bin/sh and qemu, on every relaunch; this moves
 * LD_PRELOAD into the guest's environment (qemu -E) instead.
 */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char **args = calloc((size_t)argc + 8, sizeof *args);
  char *preload = getenv("LD_PRELOAD"), *guest_preload = NULL;
  int n = 0;
  if (!args) return 127;
  args[n++] = QEMU;
  args[n++] = "-L";
  args[n++] = ROOT;
  if (preload && *preload) {
    if (asprintf(&guest_preload, "LD_PRELOAD=%s", preload) < 0) return 127;
    args[n++] = "-E";
    args[n++] = guest_preload;
  }
  unsetenv("LD_PRELOAD");
  args[n++] = ROOT "/usr/bin/ruby" VERSION ".aarch64";
  args[n++] = "-I" ROOT "/usr/lib/" TRIPLE "/ruby/" VERSION ".0";
  for (int i = 1; i < argc; i++) args[n++] = argv[i];
  execv(args[0], args);
  perror("ruby launcher: " QEMU);
  return 127;
}

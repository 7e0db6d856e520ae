/*
 * Linked into ruzzy's sanitizer preloads so that one built against a new
 * glibc (the precompiled gem's compiler-rt comes from a current clang) also
 * runs on glibc 2.31.
 *
 * - A libFuzzer archive compiled against glibc 2.38 or newer calls strtol
 *   and strtoul by their C23 names, which older glibcs lack. The C23
 *   functions differ only in also reading a "0b" prefix, which libFuzzer's
 *   flags and dictionaries never contain.
 * - libFuzzer compiled against glibc 2.33 or newer calls stat() and lstat()
 *   as functions (older glibcs only have __xstat). The sanitizer runtime's
 *   interceptors of those names forward to the next definition in the
 *   process, and there is none before glibc 2.33: libFuzzer crashed on its
 *   first corpus directory. These definitions make the system calls
 *   themselves (x86_64's struct stat is the kernel's).
 *
 * All hidden: they serve the preload's own code and replace nothing in the
 * process.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((visibility("hidden"))) long __isoc23_strtol(const char *s, char **end, int base) {
  return strtol(s, end, base);
}

__attribute__((visibility("hidden"))) unsigned long __isoc23_strtoul(const char *s, char **end, int base) {
  return strtoul(s, end, base);
}

__attribute__((visibility("hidden"))) int stat(const char *path, struct stat *buf) {
  return (int)syscall(SYS_newfstatat, AT_FDCWD, path, buf, 0);
}

__attribute__((visibility("hidden"))) int lstat(const char *path, struct stat *buf) {
  return (int)syscall(SYS_newfstatat, AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW);
}

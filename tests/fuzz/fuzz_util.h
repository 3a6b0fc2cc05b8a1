#ifndef TESTS_FUZZ_UTIL_H
#define TESTS_FUZZ_UTIL_H
/* fuzz_util.h - what the libFuzzer harnesses share: the entry point's prototype, a
 * stream over the input bytes, and invariant checks that abort (a crash to libFuzzer,
 * a failed test to the replay driver). Header-only: each harness is one translation unit. */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz invariant: ..." and aborts, so that libFuzzer saves the input. */
static inline void fuzz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static inline void fuzz_fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz invariant: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

#define FUZZ_CHECK(cond, ...) \
  do {                        \
    if (!(cond))              \
      fuzz_fail(__VA_ARGS__); \
  } while (0)

/* A read-only stream over the input bytes (NUL bytes included); fclose it. */
static inline FILE *fuzz_stream(const uint8_t *data, size_t size)
{
  static const char empty[1] = "";
  FILE *f = fmemopen(size ? (void *)(uintptr_t)data : (void *)(uintptr_t)empty, size, "r");
  FUZZ_CHECK(f != NULL, "fmemopen failed");
  return f;
}

/* A user-input error message: non-empty, one line, starting with `prefix`. */
static inline void fuzz_check_error(const char *err, const char *prefix)
{
  FUZZ_CHECK(err[0] != '\0', "an error came back with an empty message");
  FUZZ_CHECK(strncmp(err, prefix, strlen(prefix)) == 0, "error '%s' does not start with '%s'", err, prefix);
  FUZZ_CHECK(strchr(err, '\n') == NULL, "error message spans lines: '%s'", err);
}

#endif

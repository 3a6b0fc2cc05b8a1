/* replay.c - runs a libFuzzer harness without libFuzzer: LLVMFuzzerTestOneInput over
 * every file named on the command line or found in a directory named there (sorted,
 * dot files skipped). Built with the normal compiler in every build and run by ctest,
 * so the seed corpora and every committed regression input are replayed on each run,
 * under ASan + UBSan in the sanitizer build. A harness's invariant failure aborts.
 * Exit status: 0, or 1 if an argument cannot be read or no input was found. */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int replay_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, got;
  if (!f) {
    fprintf(stderr, "replay: %s: cannot open: %s\n", path, strerror(errno));
    return -1;
  }
  do {
    if (len == cap) {
      cap = cap ? 2 * cap : 4096;
      buf = realloc(buf, cap);
      FUZZ_CHECK(buf != NULL, "out of memory");
    }
    got = fread(buf + len, 1, cap - len, f);
    len += got;
  } while (got > 0);
  if (ferror(f)) {
    fprintf(stderr, "replay: %s: read error\n", path);
    fclose(f);
    free(buf);
    return -1;
  }
  fclose(f);
  /* A copy of exactly len bytes, so that ASan sees a read past the input's end. */
  uint8_t *exact = malloc(len ? len : 1);
  FUZZ_CHECK(exact != NULL, "out of memory");
  memcpy(exact, buf, len);
  free(buf);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int skip_dots(const struct dirent *e)
{
  return e->d_name[0] != '.';
}

/* Returns the number of inputs replayed, or -1. */
static long replay_path(const char *path)
{
  struct stat st;
  struct dirent **list;
  long done = 0;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode))
    return replay_file(path) == 0 ? 1 : -1;
  int n = scandir(path, &list, skip_dots, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (int i = 0; i < n; i++) {
    size_t len = strlen(path) + strlen(list[i]->d_name) + 2;
    char *child = malloc(len);
    FUZZ_CHECK(child != NULL, "out of memory");
    snprintf(child, len, "%s/%s", path, list[i]->d_name);
    if (done >= 0 && stat(child, &st) == 0 && S_ISREG(st.st_mode))
      done = replay_file(child) == 0 ? done + 1 : -1;
    free(child);
    free(list[i]);
  }
  free(list);
  return done;
}

int main(int argc, char **argv)
{
  long total = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    long n = replay_path(argv[i]);
    if (n < 0)
      return 1;
    printf("replayed %ld input(s) from %s\n", n, argv[i]);
    total += n;
  }
  if (total == 0) {
    fprintf(stderr, "replay: no input found\n");
    return 1;
  }
  printf("replayed %ld input(s), all passed\n", total);
  return 0;
}

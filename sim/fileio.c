/* fileio.c - whole files in and out: a file read at once, a file written atomically, the
 * folders it goes in, a folder removed with what it holds. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "sim/fileio.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/sysdep.h>

int fileio_write(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen)
{
  char tmp[4096], path[4096];
  snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
    return -1;
  }
  size_t w = fwrite(data, 1, len, f);
  int bad = w != len || fflush(f) != 0 || fsync(fileno(f)) != 0;
  if (fclose(f) != 0 || bad) {
    snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

char *fileio_read(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  struct { char *s; size_t len, cap; } b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
    if (b.len + n + 1 > b.cap) {
      b.cap = 2 * (b.len + n + 1);
      b.s = xbt_realloc(b.s, b.cap);
    }
    memcpy(b.s + b.len, chunk, n);
    b.len += n;
  }
  fclose(f);
  if (b.s == NULL)
    b.s = xbt_malloc0(1);
  b.s[b.len] = '\0';
  if (len)
    *len = b.len;
  return b.s;
}

int fileio_mkdirs(const char *dir, char *err, size_t errlen)
{
  char p[4096];
  snprintf(p, sizeof(p), "%s", dir);
  for (char *c = p + 1; *c; c++) {
    if (*c != '/')
      continue;
    *c = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      goto fail;
    *c = '/';
  }
  if (mkdir(p, 0777) != 0 && errno != EEXIST)
    goto fail;
  return 0;
fail:
  snprintf(err, errlen, "%s: cannot create directory: %s", p, strerror(errno));
  return -1;
}

/* nftw's callback: removes each entry after its contents (FTW_DEPTH). */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void fileio_remove_tree(const char *path)
{
  nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

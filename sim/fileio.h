#ifndef SIM_FILEIO_H
#define SIM_FILEIO_H
/* fileio.h - whole files in and out: read a file at once; write one atomically, so that
 * an interrupted run never leaves a half-written result file. */

#include <stddef.h>

/* Writes len bytes to dir/name through dir/.name.tmp, fsync(2) and rename(2). Returns 0,
 * or -1 with one line in err (and no file left behind). */
int fileio_write(const char *dir, const char *name, const char *data, size_t len, char *err, size_t errlen);

/* Creates dir and any missing parents (mkdir -p). Returns 0, or -1 with one line in err
 * naming the folder that could not be made. */
int fileio_mkdirs(const char *dir, char *err, size_t errlen);

/* The whole file at path, NUL-terminated (its length, without the NUL, into *len if
 * len is not NULL), or NULL if it cannot be opened. Caller frees with xbt_free. */
char *fileio_read(const char *path, size_t *len);

/* Removes path: a file, or a folder with everything in it (rm -r; symbolic links are
 * removed, not followed). Nothing there is no error. */
void fileio_remove_tree(const char *path);

#endif

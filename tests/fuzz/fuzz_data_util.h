#ifndef TESTS_FUZZ_DATA_UTIL_H
#define TESTS_FUZZ_DATA_UTIL_H
/* fuzz_data_util.h - what the LIBSVM and CSV harnesses check of a loader's outcome:
 * an error is one line naming the file; input with a NUL byte never loads; a data set
 * is consistent (shapes, finite values, class labels 0..k-1 that all occur) and
 * round-trips through both formats. */

#include <math.h>

#include "fuzz_util.h"

#include "models/data.h"

/* Values up to which a data set is written out and read back. */
#define FUZZ_ROUND_TRIP_MAX (1u << 16)

typedef dataset *(*fuzz_loader)(FILE *f, const char *name, char *err, size_t errlen);

static inline void check_dataset(const dataset *d)
{
  size_t n = data_n(d), dim = data_dim(d), k = d->n_classes;
  FUZZ_CHECK(n >= 1 && dim >= 1, "a loaded data set is %zu x %zu", n, dim);
  FUZZ_CHECK(d->X->tda >= dim, "tda %zu < dim %zu", d->X->tda, dim);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < dim; j++)
      FUZZ_CHECK(isfinite(gsl_matrix_get(d->X, i, j)), "X[%zu][%zu] is not finite", i, j);
  FUZZ_CHECK(k == 0 || (k >= 2 && k <= 1000), "%zu classes", k);
  if (k == 0) {
    for (size_t i = 0; i < n; i++)
      FUZZ_CHECK(isfinite(d->y[i]), "target y[%zu] is not finite", i);
    return;
  }
  unsigned char *seen = calloc(k, 1);
  FUZZ_CHECK(seen != NULL, "out of memory");
  for (size_t i = 0; i < n; i++) {
    double y = d->y[i];
    FUZZ_CHECK(y >= 0 && y < (double)k && y == floor(y), "label y[%zu] = %.17g is not a class of %zu", i, y, k);
    seen[(size_t)y] = 1;
  }
  for (size_t c = 0; c < k; c++)
    FUZZ_CHECK(seen[c], "class %zu of %zu has no example", c, k);
  free(seen);
}

static inline int same_data(const dataset *a, const dataset *b)
{
  size_t n = data_n(a), dim = data_dim(a);
  if (n != data_n(b) || dim != data_dim(b) || a->n_classes != b->n_classes)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp(a->y + i, b->y + i, sizeof(double)) != 0 ||
        memcmp(a->X->data + i * a->X->tda, b->X->data + i * b->X->tda, dim * sizeof(double)) != 0)
      return 0;
  return 1;
}

/* d written out densely in %.17g (which round-trips), as LIBSVM or as CSV. */
static inline char *write_data(const dataset *d, int csv, size_t *len)
{
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  FUZZ_CHECK(f != NULL, "open_memstream failed");
  for (size_t i = 0; i < data_n(d); i++) {
    if (!csv)
      fprintf(f, "%.17g", d->y[i]);
    for (size_t j = 0; j < data_dim(d); j++)
      if (csv)
        fprintf(f, "%.17g,", gsl_matrix_get(d->X, i, j));
      else
        fprintf(f, " %zu:%.17g", j + 1, gsl_matrix_get(d->X, i, j));
    if (csv)
      fprintf(f, "%.17g", d->y[i]);
    fputc('\n', f);
  }
  fclose(f);
  return text;
}

static inline void check_round_trip(const dataset *d, fuzz_loader load, int csv)
{
  char err[512];
  size_t len;
  char *text = write_data(d, csv, &len);
  FILE *f = fuzz_stream((const uint8_t *)text, len);
  dataset *e = load(f, "written", err, sizeof err);
  fclose(f);
  FUZZ_CHECK(e != NULL, "a loaded data set written as %s does not load: %s", csv ? "CSV" : "LIBSVM", err);
  FUZZ_CHECK(same_data(d, e), "a loaded data set written as %s loads differently", csv ? "CSV" : "LIBSVM");
  data_free(e);
  free(text);
}

/* Runs `load` over the bytes and checks its outcome. */
static inline void fuzz_data_input(const uint8_t *data, size_t size, fuzz_loader load, const char *name)
{
  char err[512] = "";
  FILE *f = fuzz_stream(data, size);
  dataset *d = load(f, name, err, sizeof err);
  fclose(f);
  if (d == NULL) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s:", name);
    fuzz_check_error(err, prefix);
    return;
  }
  /* A NUL byte cannot be part of a well-formed line: loading past one means some of the
   * file was silently dropped. */
  FUZZ_CHECK(memchr(data, '\0', size) == NULL, "input with a NUL byte loaded");
  check_dataset(d);
  /* Written out densely, a large data set (a high LIBSVM index) would cost seconds. */
  if (data_n(d) * data_dim(d) <= FUZZ_ROUND_TRIP_MAX) {
    check_round_trip(d, data_load_libsvm_stream, 0);
    check_round_trip(d, data_load_csv_stream, 1);
  }
  data_free(d);
}

#endif

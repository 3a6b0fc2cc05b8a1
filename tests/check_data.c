/* check_data.c - Check suite for models/data: deterministic synthetic data,
 * strict LIBSVM and CSV loading with file:line errors, split, shards, slices
 * and minibatch draws. */

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>

#include "models/data.h"
#include "models/rng.h"

#include "check_util.h"

/* Tolerances, each with where it comes from. */
/* TOL_FRACTION: a class fraction over n = 4000 draws has sd 0.008 (p = 1/2) or 0.0075
 * (p = 1/3); 0.05 is over 6 sd. */
#define TOL_FRACTION 0.05
/* TOL_SUM: k/n + (n-k)/n rounds to 1 within 2 u (u = 2^-53); 1e-12 leaves a margin. */
#define TOL_SUM 1e-12
/* TOL_NOISE: with label noise 0.3 over 4 classes a label differs from the teacher's with
 * probability 0.3 x 3/4 = 0.225; over n = 4000 the fraction has sd 0.0066, 0.04 is 6 sd. */
#define TOL_NOISE 0.04

#define ERRLEN 512

static int same_data(const dataset *a, const dataset *b)
{
  size_t n = data_n(a);
  return n == data_n(b) && data_dim(a) == data_dim(b) && a->n_classes == b->n_classes &&
         memcmp(a->X->data, b->X->data, n * data_dim(a) * sizeof(double)) == 0 &&
         memcmp(a->y, b->y, n * sizeof(double)) == 0;
}

/* n rows whose first feature is the row number, y = 10 * row: lets tests
 * recover which row ended up where. */
static dataset *numbered(size_t n)
{
  char path[] = "/tmp/check_data_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%zu,0.5,%zu.5\n", i, 10 * i); /* .5: real targets, no class mapping */
  fclose(f);
  char err[ERRLEN];
  dataset *d = data_load_csv(path, err, sizeof err);
  unlink(path);
  ck_assert_msg(d != NULL, "%s", err);
  return d;
}

/* Writes `text` to a fresh temporary file named *.ext and loads it with `load`;
 * returns the data set (NULL on error, message in err) and the path in path. */
static dataset *load_text(dataset *(*load)(const char *, char *, size_t), const char *text, char *path,
                          char *err)
{
  strcpy(path, "/tmp/check_data_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  dataset *d = load(path, err, ERRLEN);
  unlink(path);
  return d;
}

/* Asserts that loading `text` fails with "PATH:LINE: ..." containing `what`. */
static void expect_error(dataset *(*load)(const char *, char *, size_t), const char *text, int line,
                         const char *what)
{
  char path[64], err[ERRLEN], prefix[96];
  ck_assert_ptr_null(load_text(load, text, path, err));
  if (line > 0)
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  else
    snprintf(prefix, sizeof prefix, "%s: ", path);
  ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", err, prefix);
  ck_assert_msg(strstr(err, what) != NULL, "'%s' does not contain '%s'", err, what);
}

/* ---- synthetic ---- */

START_TEST(test_data_synthetic_determinism)
{
  gsl_rng *a = rng_create(1, RNG_ROLE_DATA, 0), *b = rng_create(1, RNG_ROLE_DATA, 0);
  gsl_rng *c = rng_create(2, RNG_ROLE_DATA, 0);
  dataset *ta = data_synthetic_teacher(50, 8, 6, 3, a), *tb = data_synthetic_teacher(50, 8, 6, 3, b);
  dataset *tc = data_synthetic_teacher(50, 8, 6, 3, c);
  ck_assert(same_data(ta, tb));
  ck_assert(!same_data(ta, tc));
  dataset *ga = data_synthetic_gaussian(50, 8, 0, 2.0, a), *gb = data_synthetic_gaussian(50, 8, 0, 2.0, b);
  dataset *gc = data_synthetic_gaussian(50, 8, 0, 2.0, c);
  ck_assert(same_data(ga, gb));
  ck_assert(!same_data(ga, gc));
  ck_assert_uint_eq(ga->n_classes, 0);
  dataset *all[] = {ta, tb, tc, ga, gb, gc};
  for (size_t i = 0; i < 6; i++)
    data_free(all[i]);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
}
END_TEST

static double fraction_of(const dataset *d, double label)
{
  size_t k = 0;
  for (size_t i = 0; i < data_n(d); i++)
    k += d->y[i] == label;
  return (double)k / (double)data_n(d);
}

/* Binary teacher: the bias-free teacher is odd in x, so P(class 1) = 1/2 exactly;
 * with n = 4000 the standard deviation of the fraction is 0.008, so +-TOL_FRACTION is
 * over 6 sigma. Gaussian classes are drawn uniformly: 1/3 each, sd 0.0075 at n = 4000. */
START_TEST(test_data_synthetic_balance)
{
  gsl_rng *r = rng_create(3, RNG_ROLE_DATA, 0);
  dataset *t = data_synthetic_teacher(4000, 10, 8, 2, r);
  ck_assert_uint_eq(t->n_classes, 2);
  ck_assert_double_eq_tol(fraction_of(t, 1.0), 0.5, TOL_FRACTION);
  ck_assert_double_eq_tol(fraction_of(t, 0.0) + fraction_of(t, 1.0), 1.0, TOL_SUM);
  dataset *g = data_synthetic_gaussian(4000, 5, 3, 1.0, r);
  for (int c = 0; c < 3; c++)
    ck_assert_double_eq_tol(fraction_of(g, c), 1.0 / 3.0, TOL_FRACTION);
  data_free(t);
  data_free(g);
  gsl_rng_free(r);
}
END_TEST

START_TEST(test_data_synthetic_rejects)
{
  gsl_rng *r = rng_create(3, RNG_ROLE_DATA, 0);
  ck_assert_ptr_null(data_synthetic_teacher(0, 3, 3, 2, r));
  ck_assert_ptr_null(data_synthetic_teacher(10, 0, 3, 2, r));
  ck_assert_ptr_null(data_synthetic_teacher(10, 3, 3, 1, r));
  ck_assert_ptr_null(data_synthetic_gaussian(10, 3, 1, 1.0, r));
  ck_assert_ptr_null(data_synthetic_gaussian(0, 3, 2, 1.0, r));
  data_free(NULL);
  gsl_rng_free(r);
}
END_TEST

/* A teacher without label noise draws what data_synthetic_teacher draws from the same
 * stream; with noise 0.3 over 4 classes 0.225 of the labels differ from the teacher's own
 * class of their x; bad arguments give NULL. */
START_TEST(test_data_teacher_noise)
{
  gsl_rng *a = rng_create(5, RNG_ROLE_DATA, 0), *b = rng_create(5, RNG_ROLE_DATA, 0);
  dataset *ref = data_synthetic_teacher(4000, 6, 5, 4, a);
  data_teacher *t = data_teacher_create(6, 5, 4, 0.0, b);
  dataset *d = data_teacher_sample(t, 4000, b);
  ck_assert(same_data(ref, d));
  for (size_t i = 0; i < 100; i++) {
    gsl_vector_const_view x = gsl_matrix_const_row(d->X, i);
    ck_assert_double_eq(data_teacher_label(t, &x.vector), d->y[i]);
  }
  data_free(d);
  data_teacher_free(t);
  gsl_rng *c = rng_create(5, RNG_ROLE_DATA, 0);
  t = data_teacher_create(6, 5, 4, 0.3, c);
  d = data_teacher_sample(t, 4000, c);
  size_t differ = 0;
  for (size_t i = 0; i < 4000; i++) {
    gsl_vector_const_view x = gsl_matrix_const_row(d->X, i);
    differ += data_teacher_label(t, &x.vector) != d->y[i];
  }
  ck_assert_double_eq_tol((double)differ / 4000.0, 0.3 * 3.0 / 4.0, TOL_NOISE);
  data_free(d);
  data_teacher_free(t);
  ck_assert_ptr_null(data_teacher_create(6, 5, 4, 1.5, a));
  ck_assert_ptr_null(data_teacher_create(6, 5, 0, 0.1, a)); /* noise needs classes */
  ck_assert_ptr_null(data_teacher_create(0, 5, 4, 0.0, a));
  data_teacher_free(NULL);
  data_free(ref);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
}
END_TEST

/* A linear teacher (hidden 0) labels each example with the argmax of W x, W being its only
 * draw (10 x 6, N(0, 1/6)): recomputed here from a copy of the stream, the labels match;
 * its classes are all used. */
START_TEST(test_data_teacher_linear)
{
  gsl_rng *a = rng_create(9, RNG_ROLE_DATA, 0), *b = rng_create(9, RNG_ROLE_DATA, 0);
  data_teacher *t = data_teacher_create(6, 0, 10, 0.0, a);
  ck_assert_ptr_nonnull(t);
  dataset *d = data_teacher_sample(t, 500, a);
  double W[60];
  for (size_t k = 0; k < 60; k++)
    W[k] = gsl_ran_gaussian(b, 1.0 / sqrt(6.0)); /* as the teacher drew it */
  size_t seen[10] = {0};
  for (size_t i = 0; i < 500; i++) {
    size_t best = 0;
    double best_v = -INFINITY;
    for (size_t c = 0; c < 10; c++) {
      double v = 0;
      for (size_t k = 0; k < 6; k++)
        v += W[c * 6 + k] * gsl_matrix_get(d->X, i, k);
      if (v > best_v) {
        best_v = v;
        best = c;
      }
    }
    ck_assert_double_eq((double)best, d->y[i]);
    seen[best]++;
  }
  for (size_t c = 0; c < 10; c++)
    ck_assert_uint_gt(seen[c], 0);
  data_free(d);
  data_teacher_free(t);
  gsl_rng_free(a);
  gsl_rng_free(b);
}
END_TEST

/* data_teacher_set_decay leaves every draw and label as they were and scales input k of
 * each example by exactly (k + 1)^(-a/2); the teacher's label of a decayed example is its
 * label; a negative or NaN exponent is refused, 0 turns the decay off. */
START_TEST(test_data_teacher_decay)
{
  gsl_rng *a = rng_create(11, RNG_ROLE_DATA, 0), *b = rng_create(11, RNG_ROLE_DATA, 0);
  data_teacher *plain = data_teacher_create(5, 4, 3, 0.0, a), *decayed = data_teacher_create(5, 4, 3, 0.0, b);
  ck_assert_int_eq(data_teacher_set_decay(decayed, -1), -1);
  ck_assert_int_eq(data_teacher_set_decay(decayed, NAN), -1);
  ck_assert_int_eq(data_teacher_set_decay(decayed, 2.0), 0);
  dataset *p = data_teacher_sample(plain, 300, a), *q = data_teacher_sample(decayed, 300, b);
  for (size_t i = 0; i < 300; i++) {
    ck_assert_double_eq(p->y[i], q->y[i]);
    for (size_t k = 0; k < 5; k++)
      ck_assert_double_eq(gsl_matrix_get(q->X, i, k), gsl_matrix_get(p->X, i, k) * pow((double)(k + 1), -1.0));
    gsl_vector_const_view x = gsl_matrix_const_row(q->X, i);
    ck_assert_double_eq(data_teacher_label(decayed, &x.vector), q->y[i]);
  }
  ck_assert_int_eq(data_teacher_set_decay(decayed, 0), 0);
  dataset *r = data_teacher_sample(decayed, 300, b), *s = data_teacher_sample(plain, 300, a);
  ck_assert(same_data(r, s));
  data_free(p);
  data_free(q);
  data_free(r);
  data_free(s);
  data_teacher_free(plain);
  data_teacher_free(decayed);
  gsl_rng_free(a);
  gsl_rng_free(b);
}
END_TEST

/* A streamed data set's draws are fresh examples of its teacher, drawn with the caller's
 * stream exactly as data_teacher_fill draws them (none of them a row of the set), two
 * workers' streams give different examples, and without the stream the rows come back. */
START_TEST(test_data_stream_draws)
{
  gsl_rng *r = rng_create(7, RNG_ROLE_DATA, 0);
  data_teacher *t = data_teacher_create(4, 3, 3, 0.1, r);
  dataset *d = data_teacher_sample(t, 50, r);
  data_set_stream(d, t);
  gsl_rng *w = rng_create(7, RNG_ROLE_WORKER, 0), *ref = rng_create(7, RNG_ROLE_WORKER, 0);
  gsl_rng *other = rng_create(7, RNG_ROLE_WORKER, 1);
  gsl_matrix *Xb = gsl_matrix_alloc(10, 4), *Xr = gsl_matrix_alloc(10, 4), *Xo = gsl_matrix_alloc(10, 4);
  double yb[10], yr[10], yo[10];
  data_sample_batch(d, 0, 50, w, 10, Xb, yb);
  data_teacher_fill(t, ref, 10, Xr, yr);
  data_sample_batch(d, 0, 50, other, 10, Xo, yo);
  for (size_t i = 0; i < 10; i++) {
    ck_assert_double_eq(yb[i], yr[i]);
    for (size_t j = 0; j < 4; j++)
      ck_assert_double_eq(gsl_matrix_get(Xb, i, j), gsl_matrix_get(Xr, i, j));
    ck_assert(gsl_matrix_get(Xb, i, 0) != gsl_matrix_get(Xo, i, 0));
    for (size_t k = 0; k < 50; k++)
      ck_assert(gsl_matrix_get(Xb, i, 0) != gsl_matrix_get(d->X, k, 0));
  }
  data_set_stream(d, NULL);
  data_sample_batch(d, 0, 50, w, 10, Xb, yb);
  for (size_t i = 0; i < 10; i++) {
    size_t k = 0;
    while (k < 50 && gsl_matrix_get(d->X, k, 0) != gsl_matrix_get(Xb, i, 0))
      k++;
    ck_assert_uint_lt(k, 50);
  }
  gsl_matrix_free(Xb);
  gsl_matrix_free(Xr);
  gsl_matrix_free(Xo);
  gsl_rng_free(w);
  gsl_rng_free(ref);
  gsl_rng_free(other);
  gsl_rng_free(r);
  data_free(d);
  data_teacher_free(t);
}
END_TEST

/* ---- LIBSVM ---- */

/* Values from tests/data/small.svm; labels -1 and +1 map to 0 and 1. */
START_TEST(test_data_libsvm_load)
{
  char err[ERRLEN] = "";
  dataset *d = data_load_libsvm(TEST_DATA_DIR "/small.svm", err, sizeof err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(data_n(d), 4);
  ck_assert_uint_eq(data_dim(d), 5);
  ck_assert_uint_eq(d->n_classes, 2);
  static const double y[] = {1, 0, 1, 0};
  static const double x0[] = {0.5, 0, -2, 0, 0}, x1[] = {0, 1.5, 0, 0, 0.4}, x3[] = {1, 2, 3, 4, 5};
  for (size_t i = 0; i < 4; i++)
    ck_assert_double_eq(d->y[i], y[i]);
  for (size_t j = 0; j < 5; j++) {
    ck_assert_double_eq(gsl_matrix_get(d->X, 0, j), x0[j]);
    ck_assert_double_eq(gsl_matrix_get(d->X, 1, j), x1[j]);
    ck_assert_double_eq(gsl_matrix_get(d->X, 2, j), 0.0);
    ck_assert_double_eq(gsl_matrix_get(d->X, 3, j), x3[j]);
  }
  data_free(d);
}
END_TEST

/* Integer labels map in increasing order; non-integer ones make a regression set. */
START_TEST(test_data_libsvm_labels)
{
  char path[64], err[ERRLEN];
  dataset *d = load_text(data_load_libsvm, "5 1:1\n2 1:2\n9 1:3\n2 1:4\n", path, err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(d->n_classes, 3);
  ck_assert_double_eq(d->y[0], 1.0);
  ck_assert_double_eq(d->y[1], 0.0);
  ck_assert_double_eq(d->y[2], 2.0);
  ck_assert_double_eq(d->y[3], 0.0);
  data_free(d);
  d = load_text(data_load_libsvm, "0.5 1:1\n-1.25 2:2\n", path, err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(d->n_classes, 0);
  ck_assert_double_eq(d->y[1], -1.25);
  data_free(d);
}
END_TEST

START_TEST(test_data_libsvm_errors)
{
  char err[ERRLEN];
  ck_assert_ptr_null(data_load_libsvm(TEST_DATA_DIR "/bad.svm", err, sizeof err));
  ck_assert_str_eq(err, TEST_DATA_DIR "/bad.svm:3: bad feature 'x:1' (expected INDEX:VALUE)");
  expect_error(data_load_libsvm, "1 1:2\n0 3:1 2:1\n", 2, "indices must be increasing");
  expect_error(data_load_libsvm, "1 1:2 1:3\n", 1, "indices must be increasing");
  expect_error(data_load_libsvm, "1 1:2\n\nabc 1:1\n", 3, "label 'abc' is not a number");
  expect_error(data_load_libsvm, "1 0:2\n", 1, "bad feature '0:2'");
  expect_error(data_load_libsvm, "1 -1:2\n", 1, "bad feature '-1:2'");
  expect_error(data_load_libsvm, "1 1:\n", 1, "bad feature '1:'");
  expect_error(data_load_libsvm, "1 1:2x\n", 1, "bad feature '1:2x'");
  expect_error(data_load_libsvm, "1 1:nan\n", 1, "bad feature '1:nan'");
  expect_error(data_load_libsvm, "1 2\n", 1, "bad feature '2'");
  expect_error(data_load_libsvm, "", 0, "no examples");
  expect_error(data_load_libsvm, "# only a comment\n\n", 0, "no examples");
  expect_error(data_load_libsvm, "1 1:1\n1 2:1\n", 0, "every example has label 1");
}
END_TEST

/* ---- CSV ---- */

/* tests/data/small.csv: a header, three rows (a blank line and blanks around
 * fields are allowed), labels {7, 3} mapped to {1, 0}. */
START_TEST(test_data_csv_load)
{
  char err[ERRLEN] = "";
  dataset *d = data_load_csv(TEST_DATA_DIR "/small.csv", err, sizeof err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(data_n(d), 3);
  ck_assert_uint_eq(data_dim(d), 2);
  ck_assert_uint_eq(d->n_classes, 2);
  static const double X[] = {1.5, -2, 0, 0.25, -10, 4}, y[] = {1, 0, 1};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_double_eq(d->y[i], y[i]);
    for (size_t j = 0; j < 2; j++)
      ck_assert_double_eq(gsl_matrix_get(d->X, i, j), X[2 * i + j]);
  }
  data_free(d);
}
END_TEST

/* Without a header the first line is data. */
START_TEST(test_data_csv_no_header)
{
  char path[64], err[ERRLEN];
  dataset *d = load_text(data_load_csv, "1,2,0.5\r\n3,4,1.5\r\n", path, err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(data_n(d), 2);
  ck_assert_uint_eq(d->n_classes, 0);
  ck_assert_double_eq(gsl_matrix_get(d->X, 1, 1), 4.0);
  data_free(d);
}
END_TEST

/* Found by fuzzing (tests/fuzz/regressions/): both loaders used to cut a line at a NUL
 * byte or at its first '\r', loading what came before and dropping the rest silently. */
static void expect_stream_error(dataset *(*load)(FILE *, const char *, char *, size_t), const char *bytes,
                                size_t len, const char *want)
{
  char err[ERRLEN] = "";
  FILE *f = fmemopen((void *)bytes, len, "r");
  ck_assert_ptr_nonnull(f);
  dataset *d = load(f, "mem", err, sizeof err);
  fclose(f);
  ck_assert_msg(d == NULL, "'%s' loaded", want);
  ck_assert_msg(strcmp(err, want) == 0, "'%s' is not '%s'", err, want);
}

START_TEST(test_data_hidden_bytes)
{
  static const char svm_nul[] = "1 1:1\n0\0 1:2\n", csv_nul[] = "1,0\n2,1\0,3\n";
  expect_stream_error(data_load_libsvm_stream, svm_nul, sizeof svm_nul - 1,
                      "mem:2: NUL byte in the line (not a text file?)");
  expect_stream_error(data_load_csv_stream, csv_nul, sizeof csv_nul - 1,
                      "mem:2: NUL byte in the line (not a text file?)");
  /* A "\r"-only file is one line: it used to load as its first example alone. */
  expect_error(data_load_libsvm, "0.5 1:1\r1.5 1:2\r", 1, "bad feature '1:1\r1.5'");
  expect_error(data_load_csv, "x,y\r1,0.5\r2,1.5\r", 0, "no examples");
  expect_error(data_load_csv, "1,2,0\n3,4\r5,1\n", 2, "column 2: '4\r5' is not a number");
  /* "\r\n" line ends still load. */
  char path[64], err[ERRLEN];
  dataset *d = load_text(data_load_csv, "1,2,0\r\n3,4,1\r\n", path, err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(data_n(d), 2);
  data_free(d);
}
END_TEST

/* Found by fuzzing: a LIBSVM line of 13 bytes made a dense row of 2^24 doubles, so a
 * 230-byte file asked for 2 GiB. 2^27 values is the limit: 8 rows of 2^24 load, 9 do not. */
START_TEST(test_data_size_limit)
{
  char text[256] = "", path[64], err[ERRLEN];
  for (int i = 0; i < 8; i++)
    strcat(text, i % 2 ? "1 16777216:1\n" : "0 1:1\n");
  dataset *d = load_text(data_load_libsvm, text, path, err);
  ck_assert_msg(d != NULL, "%s", err);
  ck_assert_uint_eq(data_dim(d), 16777216);
  data_free(d);
  strcat(text, "0 1:1\n");
  expect_error(data_load_libsvm, text, 0, "9 examples x 16777216 features is more than 2^27 values");
}
END_TEST

START_TEST(test_data_csv_errors)
{
  expect_error(data_load_csv, "a,b,y\n1,2,0\n3,4\n", 3, "expected 3 columns, found 2");
  expect_error(data_load_csv, "1,2,0\n3,4,5,1\n", 2, "expected 3 columns, found 4");
  expect_error(data_load_csv, "1,2,0\n3,x,1\n", 2, "'x' is not a number");
  expect_error(data_load_csv, "a,b,y\n", 0, "no examples");
  expect_error(data_load_csv, "", 0, "no examples");
  expect_error(data_load_csv, "7\n", 1, "expected at least 2 columns");
}
END_TEST

START_TEST(test_data_missing_file)
{
  char err[ERRLEN];
  ck_assert_ptr_null(data_load_csv(TEST_DATA_DIR "/no-such-file.csv", err, sizeof err));
  ck_assert_str_eq(err, TEST_DATA_DIR "/no-such-file.csv: cannot open: No such file or directory");
  ck_assert_ptr_null(data_load_libsvm(TEST_DATA_DIR "/no-such-file.svm", err, sizeof err));
  ck_assert_str_eq(err, TEST_DATA_DIR "/no-such-file.svm: cannot open: No such file or directory");
}
END_TEST

/* ---- split ---- */

/* 10 rows, test fraction 0.25: round(2.5) = 3 test rows, 7 train rows; every
 * original row lands in exactly one part. */
START_TEST(test_data_split)
{
  dataset *d = numbered(10), *train, *test, *train2, *test2;
  gsl_rng *r = rng_create(1, RNG_ROLE_SPLIT, 0), *r2 = rng_create(1, RNG_ROLE_SPLIT, 0);
  ck_assert_int_eq(data_split(d, 0.25, r, &train, &test), 0);
  ck_assert_uint_eq(data_n(test), 3);
  ck_assert_uint_eq(data_n(train), 7);
  int seen[10] = {0};
  for (size_t i = 0; i < 3; i++)
    seen[(int)gsl_matrix_get(test->X, i, 0)]++;
  for (size_t i = 0; i < 7; i++) {
    int row = (int)gsl_matrix_get(train->X, i, 0);
    seen[row]++;
    ck_assert_double_eq(train->y[i], 10.0 * row + 0.5);
  }
  for (size_t i = 0; i < 10; i++)
    ck_assert_int_eq(seen[i], 1);
  ck_assert_int_eq(data_split(d, 0.25, r2, &train2, &test2), 0);
  ck_assert(same_data(train, train2) && same_data(test, test2));
  data_free(train);
  data_free(test);
  data_free(train2);
  data_free(test2);
  gsl_rng_free(r);
  gsl_rng_free(r2);
  data_free(d);
}
END_TEST

/* Fractions that would leave a part empty: 0, 0.04 (round(0.4) = 0), 0.96, 1. */
START_TEST(test_data_split_rejects)
{
  dataset *d = numbered(10), *train, *test;
  gsl_rng *r = rng_create(1, RNG_ROLE_SPLIT, 0);
  static const double bad[] = {0.0, 0.04, 0.96, 1.0, -0.5, 1.5};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(data_split(d, bad[i], r, &train, &test), -1);
    ck_assert_ptr_null(train);
    ck_assert_ptr_null(test);
  }
  gsl_rng_free(r);
  data_free(d);
}
END_TEST

/* ---- shards and slices ---- */

START_TEST(test_data_shard_bounds)
{
  static const size_t rows[] = {0, 1, 7, 10, 1000};
  for (size_t a = 0; a < sizeof rows / sizeof rows[0]; a++)
    for (size_t s = 1; s <= 12; s++) {
      size_t prev_end = 0, lo = (size_t)-1, hi = 0;
      for (size_t k = 0; k < s; k++) {
        size_t b, e;
        data_shard_bounds(rows[a], s, k, &b, &e);
        ck_assert_uint_eq(b, prev_end); /* contiguous, no row twice, none skipped */
        ck_assert_uint_le(b, e);
        lo = e - b < lo ? e - b : lo;
        hi = e - b > hi ? e - b : hi;
        prev_end = e;
      }
      ck_assert_uint_eq(prev_end, rows[a]);
      ck_assert_uint_le(hi - lo, 1); /* balanced */
    }
}
END_TEST

START_TEST(test_data_shard_bad_index_aborts)
{
  size_t b, e;
  data_shard_bounds(10, 3, 3, &b, &e);
}
END_TEST

START_TEST(test_data_slice)
{
  dataset *d = numbered(6);
  dataset *s = data_slice(d, 2, 5);
  ck_assert_uint_eq(data_n(s), 3);
  for (size_t i = 0; i < 3; i++) {
    ck_assert_double_eq(gsl_matrix_get(s->X, i, 0), 2.0 + i);
    ck_assert_double_eq(s->y[i], 10.0 * (2 + i) + 0.5);
  }
  ck_assert_ptr_null(data_slice(d, 3, 3));
  ck_assert_ptr_null(data_slice(d, 4, 7));
  data_free(s);
  data_free(d);
}
END_TEST

/* ---- minibatches ---- */

START_TEST(test_data_sample_batch)
{
  dataset *d = numbered(20);
  gsl_rng *r = rng_create(1, RNG_ROLE_WORKER, 0), *r2 = rng_create(1, RNG_ROLE_WORKER, 0);
  gsl_matrix *Xb = gsl_matrix_alloc(8, 2), *Xb2 = gsl_matrix_alloc(8, 2);
  double yb[8], yb2[8];
  data_sample_batch(d, 5, 12, r, 6, Xb, yb);
  data_sample_batch(d, 5, 12, r2, 6, Xb2, yb2);
  for (size_t i = 0; i < 6; i++) {
    double row = gsl_matrix_get(Xb, i, 0);
    ck_assert(row >= 5 && row < 12);
    ck_assert_double_eq(yb[i], 10.0 * row + 0.5);
    ck_assert_double_eq(row, gsl_matrix_get(Xb2, i, 0));
    ck_assert_double_eq(yb[i], yb2[i]);
  }
  gsl_matrix_free(Xb);
  gsl_matrix_free(Xb2);
  gsl_rng_free(r);
  gsl_rng_free(r2);
  data_free(d);
}
END_TEST

/* The draws are gsl_rng_uniform_int(r, end - begin), one per row, nothing else. */
START_TEST(test_data_sample_batch_draws)
{
  dataset *d = numbered(20);
  gsl_rng *r = rng_create(4, RNG_ROLE_WORKER, 1), *ref = rng_create(4, RNG_ROLE_WORKER, 1);
  gsl_matrix *Xb = gsl_matrix_alloc(5, 2);
  double yb[5];
  data_sample_batch(d, 3, 17, r, 5, Xb, yb);
  for (size_t i = 0; i < 5; i++)
    ck_assert_double_eq(gsl_matrix_get(Xb, i, 0), 3.0 + gsl_rng_uniform_int(ref, 14));
  ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
  gsl_matrix_free(Xb);
  gsl_rng_free(r);
  gsl_rng_free(ref);
  data_free(d);
}
END_TEST

Suite *data_suite(void)
{
  Suite *s = suite_create("data");
  ADD_TCASE(s, "synthetic", test_data_synthetic_determinism, test_data_synthetic_balance,
            test_data_synthetic_rejects, test_data_teacher_noise, test_data_teacher_linear, test_data_teacher_decay);
  ADD_TCASE(s, "stream", test_data_stream_draws);
  ADD_TCASE(s, "libsvm", test_data_libsvm_load, test_data_libsvm_labels, test_data_libsvm_errors);
  ADD_TCASE(s, "csv", test_data_csv_load, test_data_csv_no_header, test_data_csv_errors);
  ADD_TCASE(s, "missing_file", test_data_missing_file);
  ADD_TCASE(s, "hostile", test_data_hidden_bytes, test_data_size_limit);
  ADD_TCASE(s, "split", test_data_split, test_data_split_rejects);
  ADD_TCASE(s, "shard", test_data_shard_bounds, test_data_slice);
  ADD_TCASE(s, "batch", test_data_sample_batch, test_data_sample_batch_draws);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_data_shard_bad_index_aborts, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(data_suite)

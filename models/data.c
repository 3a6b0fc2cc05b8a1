/* data.c - data sets: synthetic generators, LIBSVM and CSV loaders, a
 * deterministic train/test split, contiguous shards and minibatch draws.
 *
 * Every random draw comes from the gsl_rng the caller passes, in a documented
 * order, so a data set is a function of its seed. Loaders are strict: a file
 * either loads completely or fails with "PATH:LINE: problem", because a
 * silently skipped line would change results without anyone noticing. */

#include "models/data.h"
#include "models/mem.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>

/* Integer labels with more distinct values than this are taken as regression targets. */
#define DATA_MAX_CLASSES 1000
/* Largest LIBSVM feature index accepted: the matrix is dense. */
#define DATA_MAX_INDEX 16777216UL
/* Most values a loaded data set holds: 2^27 doubles, 1 GiB, as the matrix is dense. A
 * LIBSVM file is sparse: without this, each 13-byte line "1 16777216:1" costs 128 MiB. */
#define DATA_MAX_VALUES (1UL << 27)

static dataset *dataset_alloc(size_t n, size_t dim, size_t n_classes)
{
  dataset *d = mem_calloc(1, sizeof *d);
  d->X = gsl_matrix_calloc(n, dim);
  if (d->X == NULL) mem_die("data", "out of memory");
  d->y = mem_alloc(n * sizeof *d->y);
  d->n_classes = n_classes;
  return d;
}

void data_free(dataset *d)
{
  if (d == NULL) return;
  gsl_matrix_free(d->X);
  free(d->y);
  free(d);
}

size_t data_n(const dataset *d) { return d->X->size1; }
size_t data_dim(const dataset *d) { return d->X->size2; }

/* ---- synthetic generators ---- */

static void fill_gaussian(gsl_rng *r, double sigma, double *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    v[i] = gsl_ran_gaussian(r, sigma);
}

static size_t argmax(const gsl_vector *v)
{
  size_t best = 0;
  for (size_t j = 1; j < v->size; j++)
    if (gsl_vector_get(v, j) > gsl_vector_get(v, best)) best = j;
  return best;
}

struct data_teacher {
  size_t dim, hidden, n_classes, n_out;
  double noise;
  gsl_matrix *W1, *W2; /* hidden 0: W1 NULL, W2 out x dim */
  double *scale;       /* data_teacher_set_decay: input i's factor (i + 1)^(-a/2); NULL: none */
};

/* Draw order: W1 (hidden x dim, N(0, 1/dim)), W2 (out x hidden, N(0, 1/hidden)); a
 * linear teacher (hidden 0) draws W2 (out x dim, N(0, 1/dim)) alone. The variances keep
 * the pre-activations at unit scale. The teacher has no biases, so it is odd in x and
 * with two classes each has probability exactly 1/2. */
data_teacher *data_teacher_create(size_t dim, size_t hidden, size_t n_classes, double noise, gsl_rng *r)
{
  if (dim == 0 || n_classes == 1 || !(noise >= 0 && noise <= 1) || (noise > 0 && n_classes == 0))
    return NULL;
  data_teacher *t = mem_calloc(1, sizeof *t);
  *t = (data_teacher){dim, hidden, n_classes, n_classes > 0 ? n_classes : 1, noise, NULL, NULL, NULL};
  size_t fan_in = hidden ? hidden : dim;
  t->W1 = hidden ? gsl_matrix_alloc(hidden, dim) : NULL;
  t->W2 = gsl_matrix_alloc(t->n_out, fan_in);
  if ((hidden && !t->W1) || !t->W2) mem_die("data", "out of memory");
  if (hidden) fill_gaussian(r, 1.0 / sqrt((double)dim), t->W1->data, hidden * dim);
  fill_gaussian(r, 1.0 / sqrt((double)fan_in), t->W2->data, t->n_out * fan_in);
  return t;
}

int data_teacher_set_decay(data_teacher *t, double a)
{
  if (!(a >= 0 && isfinite(a))) return -1;
  free(t->scale);
  t->scale = NULL;
  if (a == 0) return 0;
  t->scale = mem_alloc(t->dim * sizeof *t->scale);
  for (size_t i = 0; i < t->dim; i++)
    t->scale[i] = pow((double)(i + 1), -a / 2);
  return 0;
}

void data_teacher_free(data_teacher *t)
{
  if (t == NULL) return;
  gsl_matrix_free(t->W1);
  gsl_matrix_free(t->W2);
  free(t->scale);
  free(t);
}

/* The teacher's output for x (as drawn, before any decay) into o (h: scratch of its
 * hidden size, unused by a linear teacher). */
static void teacher_forward(const data_teacher *t, const gsl_vector *x, gsl_vector *h, gsl_vector *o)
{
  if (t->hidden == 0) {
    gsl_blas_dgemv(CblasNoTrans, 1.0, t->W2, x, 0.0, o);
    return;
  }
  gsl_blas_dgemv(CblasNoTrans, 1.0, t->W1, x, 0.0, h);
  for (size_t j = 0; j < t->hidden; j++)
    gsl_vector_set(h, j, tanh(gsl_vector_get(h, j)));
  gsl_blas_dgemv(CblasNoTrans, 1.0, t->W2, h, 0.0, o);
}

double data_teacher_label(const data_teacher *t, const gsl_vector *x)
{
  if (x->size != t->dim) mem_die("data", "data_teacher_label: x has the wrong size");
  gsl_vector *h = gsl_vector_alloc(t->hidden ? t->hidden : 1), *o = gsl_vector_alloc(t->n_out);
  gsl_vector *z = gsl_vector_alloc(t->dim);
  if (!h || !o || !z) mem_die("data", "out of memory");
  gsl_vector_memcpy(z, x); /* the example as the teacher saw it, before the decay */
  for (size_t i = 0; t->scale && i < t->dim; i++)
    gsl_vector_set(z, i, gsl_vector_get(z, i) / t->scale[i]);
  teacher_forward(t, z, h, o);
  double y = t->n_classes > 0 ? (double)argmax(o) : gsl_vector_get(o, 0);
  gsl_vector_free(h);
  gsl_vector_free(o);
  gsl_vector_free(z);
  return y;
}

/* Draw order per example: its x, then for regression its target's noise, or with label
 * noise one uniform draw and, when it falls below the noise, the replacement class. */
void data_teacher_fill(const data_teacher *t, gsl_rng *r, size_t n, gsl_matrix *X, double *y)
{
  if (X->size1 < n || X->size2 != t->dim) mem_die("data", "data_teacher_fill: X has the wrong shape");
  gsl_vector *h = gsl_vector_alloc(t->hidden ? t->hidden : 1), *o = gsl_vector_alloc(t->n_out);
  if (!h || !o) mem_die("data", "out of memory");
  for (size_t i = 0; i < n; i++) {
    gsl_vector_view x = gsl_matrix_row(X, i);
    fill_gaussian(r, 1.0, x.vector.data, t->dim);
    teacher_forward(t, &x.vector, h, o);
    for (size_t k = 0; t->scale && k < t->dim; k++) /* the learner sees the decayed inputs */
      x.vector.data[k] *= t->scale[k];
    if (t->n_classes == 0)
      y[i] = gsl_vector_get(o, 0) + gsl_ran_gaussian(r, 0.1);
    else if (t->noise > 0 && gsl_rng_uniform(r) < t->noise)
      y[i] = (double)gsl_rng_uniform_int(r, t->n_classes);
    else
      y[i] = (double)argmax(o);
  }
  gsl_vector_free(h);
  gsl_vector_free(o);
}

dataset *data_synthetic_teacher(size_t n, size_t dim, size_t hidden, size_t n_classes, gsl_rng *r)
{
  if (n == 0) return NULL;
  data_teacher *t = data_teacher_create(dim, hidden, n_classes, 0.0, r);
  if (t == NULL) return NULL;
  dataset *d = dataset_alloc(n, dim, n_classes);
  data_teacher_fill(t, r, n, d->X, d->y);
  data_teacher_free(t);
  return d;
}

dataset *data_teacher_sample(const data_teacher *t, size_t n, gsl_rng *r)
{
  if (n == 0) return NULL;
  dataset *d = dataset_alloc(n, t->dim, t->n_classes);
  data_teacher_fill(t, r, n, d->X, d->y);
  return d;
}

void data_set_stream(dataset *d, const data_teacher *t)
{
  if (t && (t->dim != data_dim(d) || t->n_classes != d->n_classes))
    mem_die("data", "data_set_stream: the teacher's examples do not fit the data set");
  d->stream = t;
}

/* Draw order: the class means (or v) first, then per example its class, its
 * x and, for regression, its noise. */
dataset *data_synthetic_gaussian(size_t n, size_t dim, size_t n_classes, double sep, gsl_rng *r)
{
  if (n == 0 || dim == 0 || n_classes == 1) return NULL;
  size_t n_centres = n_classes > 0 ? n_classes : 1;
  double *mu = mem_alloc(n_centres * dim * sizeof *mu);
  if (n_classes > 0)
    fill_gaussian(r, sep, mu, n_classes * dim);
  else
    fill_gaussian(r, 1.0 / sqrt((double)dim), mu, dim);

  dataset *d = dataset_alloc(n, dim, n_classes);
  for (size_t i = 0; i < n; i++) {
    double *x = d->X->data + i * d->X->tda;
    if (n_classes > 0) {
      size_t c = gsl_rng_uniform_int(r, n_classes);
      for (size_t j = 0; j < dim; j++)
        x[j] = mu[c * dim + j] + gsl_ran_gaussian(r, 1.0);
      d->y[i] = (double)c;
    } else {
      double dot = 0.0;
      for (size_t j = 0; j < dim; j++) {
        x[j] = gsl_ran_gaussian(r, 1.0);
        dot += mu[j] * x[j];
      }
      d->y[i] = dot + gsl_ran_gaussian(r, 0.1);
    }
  }
  free(mu);
  return d;
}

/* ---- the synthetic token language ---- */

static const double tokens_p[DATA_TOKENS_SUCCESSORS] = {8.0 / 15, 4.0 / 15, 2.0 / 15, 1.0 / 15};

/* splitmix64's finaliser (Steele et al. 2014): a bijection of 64-bit words that mixes every bit. */
static uint64_t mix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* The successors of context (a, b): the first a hash of (salt, b) alone, the others hashes of
 * (salt, a, b, attempt), all mod vocab, keeping the first DATA_TOKENS_SUCCESSORS distinct ones. */
static void tokens_successors(uint64_t salt, size_t vocab, size_t a, size_t b, size_t *out)
{
  size_t n = 1;
  out[0] = (size_t)(mix64(salt ^ mix64((uint64_t)b)) % vocab);
  for (uint64_t j = 0; n < DATA_TOKENS_SUCCESSORS; j++) {
    size_t c = (size_t)(mix64(salt ^ mix64((((uint64_t)a + 1) * vocab + b) * 1024 + j)) % vocab), k = 0;
    while (k < n && out[k] != c)
      k++;
    if (k == n)
      out[n++] = c;
  }
}

dataset *data_synthetic_tokens(size_t n, size_t len, size_t vocab, gsl_rng *r)
{
  if (n == 0 || len < 2 || vocab < DATA_TOKENS_SUCCESSORS)
    return NULL;
  uint64_t salt = ((uint64_t)gsl_rng_get(r) << 32) ^ (uint64_t)gsl_rng_get(r);
  dataset *d = dataset_alloc(n, len, vocab);
  size_t succ[DATA_TOKENS_SUCCESSORS];
  for (size_t i = 0; i < n; i++) {
    double *x = d->X->data + i * d->X->tda;
    x[0] = (double)gsl_rng_uniform_int(r, vocab);
    x[1] = (double)gsl_rng_uniform_int(r, vocab);
    for (size_t k = 2; k < len; k++) {
      tokens_successors(salt, vocab, (size_t)x[k - 2], (size_t)x[k - 1], succ);
      double u = gsl_rng_uniform(r), acc = 0.0;
      size_t c = 0;
      while (c + 1 < DATA_TOKENS_SUCCESSORS && u >= (acc += tokens_p[c]))
        c++;
      x[k] = (double)succ[c];
    }
    d->y[i] = 0.0;
  }
  return d;
}

double data_tokens_loss_floor(size_t len, size_t vocab)
{
  double H = 0.0;
  for (size_t c = 0; c < DATA_TOKENS_SUCCESSORS; c++)
    H -= tokens_p[c] * log(tokens_p[c]);
  return (log((double)vocab) + (double)(len - 2) * H) / (double)(len - 1);
}

/* ---- growable arrays and error text for the loaders ---- */

typedef struct dbuf {
  double *v;
  size_t n, cap;
} dbuf;

typedef struct zbuf {
  size_t *v;
  size_t n, cap;
} zbuf;

static void dbuf_push(dbuf *b, double x)
{
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 256;
    b->v = mem_realloc(b->v, b->cap * sizeof *b->v);
  }
  b->v[b->n++] = x;
}

static void zbuf_push(zbuf *b, size_t x)
{
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 256;
    b->v = mem_realloc(b->v, b->cap * sizeof *b->v);
  }
  b->v[b->n++] = x;
}

/* A finite double spanning all of s (no trailing characters, no empty string). */
static int parse_double(const char *s, double *out)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static FILE *open_or_err(const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  if (f == NULL) mem_seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  return f;
}

/* Cuts the line's "\n" or "\r\n". Returns -1 if it holds a NUL byte, which would hide
 * the rest of the line (a binary file); a '\r' elsewhere is left to fail parsing, as
 * cutting there would silently drop the rest of a "\r"-only file. */
static int chomp(char *line, ssize_t len)
{
  size_t n = (size_t)len;
  if (memchr(line, '\0', n) != NULL) return -1;
  if (n > 0 && line[n - 1] == '\n') n--;
  if (n > 0 && line[n - 1] == '\r') n--;
  line[n] = '\0';
  return 0;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Maps integer labels onto class indices 0..k-1 in increasing order, or leaves
 * them as regression targets (returns 0 classes). Returns -1 if they are one
 * single class, which no classifier can be trained on. */
static int map_labels(double *y, size_t n, size_t *n_classes)
{
  for (size_t i = 0; i < n; i++)
    if (y[i] != floor(y[i]) || fabs(y[i]) > 9007199254740992.0 /* 2^53 */) {
      *n_classes = 0;
      return 0;
    }
  double *u = mem_alloc(n * sizeof *u);
  memcpy(u, y, n * sizeof *u);
  qsort(u, n, sizeof *u, cmp_double);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k == 0 || u[i] != u[k - 1]) u[k++] = u[i];
  if (k > DATA_MAX_CLASSES) {
    free(u);
    *n_classes = 0;
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const double *c = bsearch(&y[i], u, k, sizeof *u, cmp_double);
    y[i] = (double)(c - u);
  }
  free(u);
  *n_classes = k;
  return k == 1 ? -1 : 0;
}

/* Builds the data set from row-major values, maps the labels; frees nothing. */
static dataset *finish(const char *path, const dbuf *labels, size_t dim, char *err, size_t errlen)
{
  size_t n = labels->n, n_classes;
  if (n == 0) {
    mem_seterr(err, errlen, "%s: no examples", path);
    return NULL;
  }
  if (dim == 0) {
    mem_seterr(err, errlen, "%s: no features", path);
    return NULL;
  }
  if (n > DATA_MAX_VALUES / dim) {
    mem_seterr(err, errlen, "%s: %zu examples x %zu features is more than 2^27 values (1 GiB dense), the most "
           "a data set holds", path, n, dim);
    return NULL;
  }
  dataset *d = dataset_alloc(n, dim, 0);
  memcpy(d->y, labels->v, n * sizeof *d->y);
  if (map_labels(d->y, n, &n_classes) != 0) {
    mem_seterr(err, errlen, "%s: every example has label %.17g; need two classes or real targets", path,
           labels->v[0]);
    data_free(d);
    return NULL;
  }
  d->n_classes = n_classes;
  return d;
}

/* ---- LIBSVM ---- */

/* The features of one LIBSVM line, kept as (row, index, value) triples. */
typedef struct svm_entries {
  zbuf row, col;
  dbuf val;
  size_t dim;
} svm_entries;

/* Parses "INDEX:VALUE" in place; returns NULL, or why the token is not a feature. */
static const char *parse_feature(char *tok, size_t *idx, double *val)
{
  char *colon = strchr(tok, ':');
  if (colon == NULL || colon == tok) return "expected INDEX:VALUE";
  *colon = '\0';
  /* strtoul would accept signs and blanks; an index is digits only. */
  int digits = strspn(tok, "0123456789") == strlen(tok);
  unsigned long i = digits ? strtoul(tok, NULL, 10) : 0;
  *colon = ':';
  if (!digits) return "expected INDEX:VALUE";
  if (i == 0 || i > DATA_MAX_INDEX) return "indices run from 1 to 16777216";
  if (parse_double(colon + 1, val) != 0) return "expected INDEX:VALUE with a finite VALUE";
  *idx = i;
  return NULL;
}

/* Parses one line (comment already cut) as example `row`; returns 0, or -1 with err set. */
static int svm_line(char *line, const char *path, size_t lineno, dbuf *labels, svm_entries *e,
                    char *err, size_t errlen)
{
  const char *blanks = " \t";
  char *save = NULL, *tok = strtok_r(line, blanks, &save);
  size_t row = labels->n, prev = 0;
  double label;
  if (parse_double(tok, &label) != 0) {
    mem_seterr(err, errlen, "%s:%zu: label '%s' is not a number", path, lineno, tok);
    return -1;
  }
  dbuf_push(labels, label);
  while ((tok = strtok_r(NULL, blanks, &save)) != NULL) {
    size_t idx;
    double val;
    const char *why = parse_feature(tok, &idx, &val);
    if (why != NULL) {
      mem_seterr(err, errlen, "%s:%zu: bad feature '%s' (%s)", path, lineno, tok, why);
      return -1;
    }
    if (idx <= prev) {
      mem_seterr(err, errlen, "%s:%zu: indices must be increasing ('%s' after index %zu)", path, lineno, tok, prev);
      return -1;
    }
    zbuf_push(&e->row, row);
    zbuf_push(&e->col, idx - 1);
    dbuf_push(&e->val, val);
    if (idx > e->dim) e->dim = idx;
    prev = idx;
  }
  return 0;
}

dataset *data_load_libsvm_stream(FILE *f, const char *path, char *err, size_t errlen)
{
  dbuf labels = {0};
  svm_entries e = {0};
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  int bad = 0;
  ssize_t len;
  while (!bad && (len = getline(&line, &cap, f)) != -1) {
    lineno++;
    if (chomp(line, len) != 0) {
      mem_seterr(err, errlen, "%s:%zu: NUL byte in the line (not a text file?)", path, lineno);
      bad = 1;
      break;
    }
    line[strcspn(line, "#")] = '\0';
    if (line[strspn(line, " \t")] == '\0') continue;
    bad = svm_line(line, path, lineno, &labels, &e, err, errlen) != 0;
  }
  if (!bad && ferror(f)) {
    mem_seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
    bad = 1;
  }
  free(line);
  dataset *d = bad ? NULL : finish(path, &labels, e.dim, err, errlen);
  for (size_t k = 0; d != NULL && k < e.val.n; k++)
    gsl_matrix_set(d->X, e.row.v[k], e.col.v[k], e.val.v[k]);
  free(labels.v);
  free(e.row.v);
  free(e.col.v);
  free(e.val.v);
  return d;
}

dataset *data_load_libsvm(const char *path, char *err, size_t errlen)
{
  FILE *f = open_or_err(path, err, errlen);
  if (f == NULL) return NULL;
  dataset *d = data_load_libsvm_stream(f, path, err, errlen);
  fclose(f);
  return d;
}

/* ---- CSV ---- */

/* Scratch for one CSV line; ncol is fixed by the first non-blank line. */
typedef struct csv_reader {
  char **fields;
  double *vals;
  size_t cap, ncol;
} csv_reader;

/* Splits a line on commas into fields (trimmed in place); returns the count. */
static size_t csv_split(csv_reader *c, char *line)
{
  size_t n = 0;
  char *p = line;
  for (;;) {
    if (n == c->cap) {
      c->cap = c->cap ? 2 * c->cap : 16;
      c->fields = mem_realloc(c->fields, c->cap * sizeof *c->fields);
      c->vals = mem_realloc(c->vals, c->cap * sizeof *c->vals);
    }
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    p += strspn(p, " \t");
    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
      p[--len] = '\0';
    c->fields[n++] = p;
    if (!comma) return n;
    p = comma + 1;
  }
}

/* Index of the first field that is not a number, or n if all are. */
static size_t csv_parse_fields(csv_reader *c, size_t n)
{
  for (size_t j = 0; j < n; j++)
    if (parse_double(c->fields[j], &c->vals[j]) != 0) return j;
  return n;
}

/* Parses one non-blank line into X values and a label. Returns 0, 1 for a
 * header (the first line, when it is not all numbers), or -1 with err set. */
static int csv_line(csv_reader *c, char *line, const char *path, size_t lineno, dbuf *X, dbuf *labels,
                    char *err, size_t errlen)
{
  size_t m = csv_split(c, line);
  int first = c->ncol == 0;
  if (first && m < 2) {
    mem_seterr(err, errlen, "%s:%zu: expected at least 2 columns (features, then the label), found %zu", path,
           lineno, m);
    return -1;
  }
  if (first) c->ncol = m;
  if (m != c->ncol) {
    mem_seterr(err, errlen, "%s:%zu: expected %zu columns, found %zu", path, lineno, c->ncol, m);
    return -1;
  }
  size_t bad = csv_parse_fields(c, m);
  if (bad < m && first) return 1;
  if (bad < m) {
    mem_seterr(err, errlen, "%s:%zu: column %zu: '%s' is not a number", path, lineno, bad + 1, c->fields[bad]);
    return -1;
  }
  for (size_t j = 0; j + 1 < m; j++)
    dbuf_push(X, c->vals[j]);
  dbuf_push(labels, c->vals[m - 1]);
  return 0;
}

dataset *data_load_csv_stream(FILE *f, const char *path, char *err, size_t errlen)
{
  dbuf X = {0}, labels = {0};
  csv_reader c = {0};
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  int rc = 0;
  ssize_t len;
  while (rc >= 0 && (len = getline(&line, &cap, f)) != -1) {
    lineno++;
    if (chomp(line, len) != 0) {
      mem_seterr(err, errlen, "%s:%zu: NUL byte in the line (not a text file?)", path, lineno);
      rc = -1;
      break;
    }
    if (line[strspn(line, " \t")] == '\0') continue;
    rc = csv_line(&c, line, path, lineno, &X, &labels, err, errlen);
  }
  if (rc >= 0 && ferror(f)) {
    mem_seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
    rc = -1;
  }
  free(line);
  free(c.fields);
  free(c.vals);
  dataset *d = rc < 0 ? NULL : finish(path, &labels, c.ncol > 0 ? c.ncol - 1 : 0, err, errlen);
  if (d != NULL) memcpy(d->X->data, X.v, X.n * sizeof *X.v);
  free(X.v);
  free(labels.v);
  return d;
}

dataset *data_load_csv(const char *path, char *err, size_t errlen)
{
  FILE *f = open_or_err(path, err, errlen);
  if (f == NULL) return NULL;
  dataset *d = data_load_csv_stream(f, path, err, errlen);
  fclose(f);
  return d;
}

/* ---- split, slices, shards, batches ---- */

/* A fresh data set holding rows idx[0..n-1] of d, in that order. */
static dataset *gather(const dataset *d, const size_t *idx, size_t n)
{
  dataset *out = dataset_alloc(n, data_dim(d), d->n_classes);
  for (size_t i = 0; i < n; i++) {
    gsl_vector_const_view src = gsl_matrix_const_row(d->X, idx[i]);
    gsl_matrix_set_row(out->X, i, &src.vector);
    out->y[i] = d->y[idx[i]];
  }
  return out;
}

int data_split(const dataset *d, double test_fraction, gsl_rng *r, dataset **train, dataset **test)
{
  *train = *test = NULL;
  size_t n = data_n(d);
  if (!(test_fraction >= 0.0 && test_fraction <= 1.0)) return -1;
  size_t n_test = (size_t)floor(test_fraction * (double)n + 0.5);
  if (n_test == 0 || n_test >= n) return -1;
  size_t *perm = mem_alloc(n * sizeof *perm);
  for (size_t i = 0; i < n; i++)
    perm[i] = i;
  /* Fisher-Yates (Knuth, TAOCP vol. 2, Algorithm 3.4.2P), from the top down. */
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = gsl_rng_uniform_int(r, i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  *test = gather(d, perm, n_test);
  *train = gather(d, perm + n_test, n - n_test);
  free(perm);
  return 0;
}

dataset *data_slice(const dataset *d, size_t begin, size_t end)
{
  if (begin >= end || end > data_n(d)) return NULL;
  dataset *out = dataset_alloc(end - begin, data_dim(d), d->n_classes);
  gsl_matrix_const_view src = gsl_matrix_const_submatrix(d->X, begin, 0, end - begin, data_dim(d));
  gsl_matrix_memcpy(out->X, &src.matrix);
  memcpy(out->y, d->y + begin, (end - begin) * sizeof *out->y);
  return out;
}

/* The first n_rows % n_shards shards get one extra row, so sizes differ by at most one. */
void data_shard_bounds(size_t n_rows, size_t n_shards, size_t k, size_t *begin, size_t *end)
{
  if (n_shards == 0 || k >= n_shards) mem_die("data", "data_shard_bounds: shard index out of range");
  size_t base = n_rows / n_shards, extra = n_rows % n_shards;
  *begin = k * base + (k < extra ? k : extra);
  *end = *begin + base + (k < extra ? 1 : 0);
}

void data_sample_batch(const dataset *d, size_t begin, size_t end, gsl_rng *r, size_t batch,
                       gsl_matrix *Xb, double *yb)
{
  if (begin >= end || end > data_n(d)) mem_die("data", "data_sample_batch: empty or out-of-range rows");
  if (Xb->size1 < batch || Xb->size2 != data_dim(d)) mem_die("data", "data_sample_batch: Xb has the wrong shape");
  if (d->stream) { /* fresh examples, never a row again */
    data_teacher_fill(d->stream, r, batch, Xb, yb);
    return;
  }
  for (size_t i = 0; i < batch; i++) {
    size_t row = begin + gsl_rng_uniform_int(r, end - begin);
    gsl_vector_const_view src = gsl_matrix_const_row(d->X, row);
    gsl_matrix_set_row(Xb, i, &src.vector);
    yb[i] = d->y[row];
  }
}

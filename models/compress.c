/* compress.c - top-k (DGC), 1-bit, QSGD and PowerSGD with error feedback, and their
 * wire sizes and flops. */
#include "models/compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>

#include "models/mem.h"

struct compress_state {
  compress_params p;
  size_t rows, cols, n;
  double *residual; /* [n] error feedback */
  double *u;        /* [n] top-k: DGC momentum, NULL without momentum correction */
  double *m;        /* [n] PowerSGD: this step's M = g + residual */
  double *q;        /* [cols r] PowerSGD: the warm Q */
  double *mag;      /* [n] top-k: scratch for the selection (magnitudes, reordered by it) */
};

static const char *const method_names[] = {"none", "topk", "onebit", "qsgd", "powersgd"};

int compress_method_parse(const char *s, compress_method *m)
{
  for (size_t i = 0; i < sizeof method_names / sizeof *method_names; i++)
    if (strcmp(s, method_names[i]) == 0) {
      *m = (compress_method)i;
      return 0;
    }
  return -1;
}

const char *compress_method_name(compress_method m)
{
  return (size_t)m < sizeof method_names / sizeof *method_names ? method_names[m] : "?";
}

double compress_density(const compress_params *p, long step)
{
  if (p->warmup_steps <= 0 || step >= p->warmup_steps)
    return p->ratio;
  long quarter = step * 4 / p->warmup_steps; /* 0..3 */
  double d = pow(0.25, (double)(quarter + 1));
  return d > p->ratio ? d : p->ratio;
}

size_t compress_topk_k(const compress_params *p, size_t n, long step)
{
  double k = ceil(compress_density(p, step) * (double)n);
  if (k < 1)
    k = 1;
  return k > (double)n ? n : (size_t)k;
}

int compress_powersgd_applies(const compress_params *p, size_t rows, size_t cols)
{
  double r = p->rank;
  return rows > 1 && cols > 1 && r * ((double)rows + (double)cols) < (double)rows * (double)cols;
}

static double qsgd_bits(int levels) { return 1 + ceil(log2((double)levels + 1)); }

double compress_wire_bytes(const compress_params *p, size_t rows, size_t cols, long step, size_t elem_bytes)
{
  double n = (double)rows * (double)cols, e = (double)elem_bytes;
  switch (p->method) {
  case COMPRESS_TOPK:
    return (double)compress_topk_k(p, rows * cols, step) * (COMPRESS_INDEX_BYTES + e);
  case COMPRESS_ONEBIT:
    return ceil(n / 8) + 2 * (double)rows * e;
  case COMPRESS_QSGD:
    return ceil(n * qsgd_bits(p->levels) / 8) + e;
  case COMPRESS_POWERSGD:
    if (compress_powersgd_applies(p, rows, cols))
      return (double)p->rank * ((double)rows + (double)cols) * e;
    return n * e;
  case COMPRESS_NONE:
    break;
  }
  return n * e;
}

/* Counted per element: top-k adds the residual (1), with momentum u = m u + g (2), then
 * selects k of n as a heap would (log2(k + 1) comparisons each) and clears what it sent;
 * 1-bit adds the residual, sums the row's two sides, chooses the bit, forms the residual
 * (4); QSGD adds the residual, squares and sums for the norm, scales, draws, rounds and
 * forms the residual (7). PowerSGD: M = g + e (n), P = M Q and Q = M^T P (2 n r each),
 * Gram-Schmidt (2 rows r^2), the residual M - P Q^T (2 n r + n). */
double compress_encode_flops(const compress_params *p, size_t rows, size_t cols, long step)
{
  double n = (double)rows * (double)cols, r = p->rank;
  switch (p->method) {
  case COMPRESS_TOPK: {
    double k = (double)compress_topk_k(p, rows * cols, step);
    return n * (1 + (p->momentum > 0 ? 2 : 0) + log2(k + 1));
  }
  case COMPRESS_ONEBIT:
    return 4 * n;
  case COMPRESS_QSGD:
    return 7 * n;
  case COMPRESS_POWERSGD:
    if (!compress_powersgd_applies(p, rows, cols))
      return 0;
    return 2 * n + 6 * n * r + 2 * (double)rows * r * r;
  case COMPRESS_NONE:
    break;
  }
  return 0;
}

/* Decoding adds every rank's message: k adds (top-k), n (1-bit: the scale of its bit),
 * 2 n (QSGD: level times norm / s); PowerSGD forms P Qsum^T once (2 n r). */
double compress_decode_flops(const compress_params *p, size_t rows, size_t cols, long step, size_t ranks)
{
  double n = (double)rows * (double)cols, k = (double)ranks;
  switch (p->method) {
  case COMPRESS_TOPK:
    return k * (double)compress_topk_k(p, rows * cols, step);
  case COMPRESS_ONEBIT:
    return k * n;
  case COMPRESS_QSGD:
    return 2 * k * n;
  case COMPRESS_POWERSGD:
    return compress_powersgd_applies(p, rows, cols) ? 2 * n * p->rank : 0;
  case COMPRESS_NONE:
    break;
  }
  return 0;
}

compress_state *compress_state_create(const compress_params *p, size_t rows, size_t cols, gsl_rng *init)
{
  if (rows == 0 || cols == 0 || p->method == COMPRESS_NONE ||
      (p->method == COMPRESS_TOPK && !(p->ratio > 0 && p->ratio <= 1)) ||
      (p->method == COMPRESS_QSGD && p->levels < 1) || (p->method == COMPRESS_POWERSGD && p->rank < 1) ||
      (p->method == COMPRESS_POWERSGD && compress_powersgd_applies(p, rows, cols) && init == NULL))
    return NULL;
  compress_state *s = mem_calloc(1, sizeof(*s));
  s->p = *p;
  s->rows = rows;
  s->cols = cols;
  s->n = rows * cols;
  s->residual = mem_calloc(s->n, sizeof(double));
  if (p->method == COMPRESS_TOPK) {
    s->mag = mem_alloc(s->n * sizeof(double));
    if (p->momentum > 0)
      s->u = mem_calloc(s->n, sizeof(double));
  }
  if (p->method == COMPRESS_POWERSGD && compress_powersgd_applies(p, rows, cols)) {
    size_t r = (size_t)p->rank;
    s->m = mem_calloc(s->n, sizeof(double));
    s->q = mem_alloc(cols * r * sizeof(double));
    for (size_t i = 0; i < cols * r; i++)
      s->q[i] = gsl_ran_gaussian(init, 1.0);
  }
  return s;
}

void compress_state_free(compress_state *s)
{
  if (s == NULL)
    return;
  free(s->residual);
  free(s->u);
  free(s->m);
  free(s->q);
  free(s->mag);
  free(s);
}

const double *compress_residual(const compress_state *s) { return s->residual; }

void compress_msg_alloc(const compress_state *s, compress_msg *m)
{
  memset(m, 0, sizeof(*m));
  m->method = s->p.method;
  m->n = s->n;
  m->cols = s->cols;
  m->levels = s->p.levels;
  switch (s->p.method) {
  case COMPRESS_TOPK: {
    size_t k = compress_topk_k(&s->p, s->n, 0);
    m->idx = mem_alloc(k * sizeof(uint32_t));
    m->val = mem_alloc(k * sizeof(double));
    break;
  }
  case COMPRESS_ONEBIT:
    m->bit = mem_alloc(s->n);
    m->scale = mem_alloc(2 * s->rows * sizeof(double));
    break;
  case COMPRESS_QSGD:
    m->level = mem_alloc(s->n * sizeof(int));
    m->scale = mem_alloc(sizeof(double));
    break;
  default:
    break;
  }
}

size_t compress_msg_place(const compress_state *s, long step, compress_msg *m, void *mem)
{
  size_t nd = 0, ni = 0, isz = 0; /* nd doubles, then ni items of isz bytes */
  switch (s->p.method) {
  case COMPRESS_TOPK:
    nd = ni = compress_topk_k(&s->p, s->n, step);
    isz = sizeof(uint32_t);
    break;
  case COMPRESS_ONEBIT:
    nd = 2 * s->rows;
    ni = s->n;
    isz = 1;
    break;
  case COMPRESS_QSGD:
    nd = 1;
    ni = s->n;
    isz = sizeof(int);
    break;
  default:
    break;
  }
  if (mem == NULL)
    return nd * sizeof(double) + ni * isz;
  memset(m, 0, sizeof(*m));
  m->method = s->p.method;
  m->n = s->n;
  m->cols = s->cols;
  m->levels = s->p.levels;
  double *d = mem;
  void *rest = d + nd; /* aligned for a double, so for an index or a level too */
  if (s->p.method == COMPRESS_TOPK) {
    m->val = d;
    m->idx = rest;
  } else if (s->p.method == COMPRESS_ONEBIT) {
    m->scale = d;
    m->bit = rest;
  } else if (s->p.method == COMPRESS_QSGD) {
    m->scale = d;
    m->level = rest;
  }
  return nd * sizeof(double) + ni * isz;
}

void compress_msg_release(compress_msg *m)
{
  free(m->idx);
  free(m->val);
  free(m->bit);
  free(m->level);
  free(m->scale);
  memset(m, 0, sizeof(*m));
}

/* ---- top-k ------------------------------------------------------------------- */

/* The k entries of largest |v|, ties to the lower index, in increasing index order:
 * GSL's quickselect (gsl_stats_select, expected O(n)) finds t, the k-th largest magnitude,
 * in a scratch copy; one pass in index order then takes every entry above t and, of those
 * equal to t, the first k - (entries above t). The same set a full sort by (magnitude
 * descending, index ascending) gives, at the cost of a copy and a selection. A NaN counts
 * as the largest magnitude (a diverged run's message stays deterministic). */
static void topk_select(compress_state *s, const double *v, size_t k, compress_msg *m)
{
  size_t n = s->n, above = 0;
  for (size_t i = 0; i < n; i++)
    s->mag[i] = isnan(v[i]) ? INFINITY : fabs(v[i]);
  double t = gsl_stats_select(s->mag, 1, n, n - k); /* the (n - k)-th smallest, 0-based */
  for (size_t i = 0; i < n; i++)
    above += (isnan(v[i]) ? INFINITY : fabs(v[i])) > t;
  size_t ties = k - above, j = 0;
  for (size_t i = 0; i < n && j < k; i++) {
    double a = isnan(v[i]) ? INFINITY : fabs(v[i]);
    if (a > t || (a == t && ties > 0)) {
      if (a == t)
        ties--;
      m->idx[j++] = (uint32_t)i;
    }
  }
  m->k = j;
}

static void topk_encode(compress_state *s, const double *g, long step, compress_msg *m)
{
  double *v = s->residual;
  for (size_t i = 0; i < s->n; i++) {
    if (s->u) { /* DGC sec. 3.2: accumulate the velocity, not the gradient */
      s->u[i] = s->p.momentum * s->u[i] + g[i];
      v[i] += s->u[i];
    } else {
      v[i] += g[i];
    }
  }
  topk_select(s, v, compress_topk_k(&s->p, s->n, step), m);
  for (size_t j = 0; j < m->k; j++) {
    size_t i = m->idx[j];
    m->val[j] = v[i];
    v[i] = 0;
    if (s->u) /* DGC sec. 3.2, momentum factor masking */
      s->u[i] = 0;
  }
}

/* ---- 1-bit and QSGD ------------------------------------------------------------ */

/* Seide et al. sec. 3: a bit per value and, per row, the mean of the values each bit
 * stands for, so that the row's sum is kept; the quantisation error feeds back. */
static void onebit_encode(compress_state *s, const double *g, compress_msg *m)
{
  double *v = s->residual;
  for (size_t i = 0; i < s->n; i++)
    v[i] += g[i];
  for (size_t row = 0; row < s->rows; row++) {
    double *x = v + row * s->cols, sum[2] = {0, 0};
    size_t cnt[2] = {0, 0};
    unsigned char *b = m->bit + row * s->cols;
    for (size_t j = 0; j < s->cols; j++) {
      b[j] = x[j] >= 0;
      sum[b[j]] += x[j];
      cnt[b[j]]++;
    }
    double *sc = m->scale + 2 * row; /* sc[0] for bit 1 (non-negative), sc[1] for bit 0 */
    sc[0] = cnt[1] ? sum[1] / (double)cnt[1] : 0;
    sc[1] = cnt[0] ? sum[0] / (double)cnt[0] : 0;
    for (size_t j = 0; j < s->cols; j++)
      x[j] -= b[j] ? sc[0] : sc[1];
  }
}

static void qsgd_encode(compress_state *s, const double *g, gsl_rng *r, compress_msg *m)
{
  double *v = s->residual, norm = 0, levels = s->p.levels;
  for (size_t i = 0; i < s->n; i++) {
    v[i] += g[i];
    norm += v[i] * v[i];
  }
  norm = sqrt(norm);
  m->scale[0] = norm;
  for (size_t i = 0; i < s->n; i++) {
    double a = norm > 0 ? levels * fabs(v[i]) / norm : 0, l = floor(a);
    if (gsl_rng_uniform(r) < a - l) /* Alistarh et al. sec. 3.1: unbiased rounding */
      l += 1;
    m->level[i] = (int)(v[i] < 0 ? -l : l);
    v[i] -= norm * m->level[i] / levels;
  }
}

void compress_encode(compress_state *s, const double *g, long step, gsl_rng *r, compress_msg *m)
{
  m->n = s->n;
  if (s->p.method == COMPRESS_TOPK)
    topk_encode(s, g, step, m);
  else if (s->p.method == COMPRESS_ONEBIT)
    onebit_encode(s, g, m);
  else if (s->p.method == COMPRESS_QSGD)
    qsgd_encode(s, g, r, m);
  else
    mem_die("compress", "compress_encode on a method without messages");
}

void compress_decode_add(const compress_msg *m, double *out)
{
  if (m->method == COMPRESS_TOPK) {
    for (size_t j = 0; j < m->k; j++)
      out[m->idx[j]] += m->val[j];
  } else if (m->method == COMPRESS_ONEBIT) {
    for (size_t i = 0; i < m->n; i++)
      out[i] += m->scale[2 * (i / m->cols) + (m->bit[i] ? 0 : 1)];
  } else if (m->method == COMPRESS_QSGD) {
    for (size_t i = 0; i < m->n; i++)
      out[i] += m->scale[0] * m->level[i] / m->levels;
  }
}

/* ---- PowerSGD ------------------------------------------------------------------ */

void compress_orthonormalise(double *A, size_t rows, size_t r)
{
  for (size_t c = 0; c < r; c++) {
    gsl_vector_view a = gsl_vector_view_array_with_stride(A + c, r, rows);
    for (size_t prev = 0; prev < c; prev++) {
      gsl_vector_view q = gsl_vector_view_array_with_stride(A + prev, r, rows);
      double dot;
      gsl_blas_ddot(&q.vector, &a.vector, &dot);
      gsl_blas_daxpy(-dot, &q.vector, &a.vector);
    }
    double norm = gsl_blas_dnrm2(&a.vector);
    if (norm > 0)
      gsl_blas_dscal(1 / norm, &a.vector);
  }
}

void compress_powersgd_p(compress_state *s, const double *g, double *P)
{
  size_t r = (size_t)s->p.rank;
  for (size_t i = 0; i < s->n; i++)
    s->m[i] = g[i] + s->residual[i];
  gsl_matrix_const_view M = gsl_matrix_const_view_array(s->m, s->rows, s->cols);
  gsl_matrix_const_view Q = gsl_matrix_const_view_array(s->q, s->cols, r);
  gsl_matrix_view Pv = gsl_matrix_view_array(P, s->rows, r);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &M.matrix, &Q.matrix, 0.0, &Pv.matrix);
}

void compress_powersgd_q(compress_state *s, double *P, double *Q)
{
  size_t r = (size_t)s->p.rank;
  compress_orthonormalise(P, s->rows, r);
  gsl_matrix_const_view M = gsl_matrix_const_view_array(s->m, s->rows, s->cols);
  gsl_matrix_view Pv = gsl_matrix_view_array(P, s->rows, r), Qv = gsl_matrix_view_array(Q, s->cols, r);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &M.matrix, &Pv.matrix, 0.0, &Qv.matrix);
  /* Vogels et al. Alg. 2: e = M - decompress(compress(M)), this rank's own approximation */
  memcpy(s->residual, s->m, s->n * sizeof(double));
  gsl_matrix_view E = gsl_matrix_view_array(s->residual, s->rows, s->cols);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, -1.0, &Pv.matrix, &Qv.matrix, 1.0, &E.matrix);
}

void compress_powersgd_decode(compress_state *s, const double *P, const double *Qsum, double *out)
{
  size_t r = (size_t)s->p.rank;
  gsl_matrix_const_view Pv = gsl_matrix_const_view_array(P, s->rows, r);
  gsl_matrix_const_view Qv = gsl_matrix_const_view_array(Qsum, s->cols, r);
  gsl_matrix_view O = gsl_matrix_view_array(out, s->rows, s->cols);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &Pv.matrix, &Qv.matrix, 0.0, &O.matrix);
  memcpy(s->q, Qsum, s->cols * r * sizeof(double)); /* Vogels et al. sec. 3: warm start */
}

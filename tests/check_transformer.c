/* check_transformer.c - Check suite for models/transformer: layout and flop counts,
 * the serial layer's gradient against central differences, and the Megatron
 * tensor-parallel split (plain and sequence-parallel, t = 1, 2, 4) against the serial
 * layer: output, input gradient and every weight gradient. The ranks are driven as
 * algorithms/tensor drives them, with the collectives done in memory in rank order. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>

#include "models/transformer.h"

#include "check_util.h"

/* Tolerances, each with where it comes from. */
/* Central differences, as check_net.c: h = 1e-6, truncation ~h^2, rounding ~1e-10. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8
/* The ranks sum the same products as the serial layer in another association (partial
 * GEMMs over column/row blocks, then over ranks), so results differ by rounding only:
 * sums of at most 4h = 64 products per entry here, ~64 u ~ 7e-15 of their largest terms;
 * 1e-12 of the quantity's largest entry leaves a margin (max-norm relative, since
 * entry-wise relative error is meaningless for entries that cancel to ~0). */
#define PART_RTOL 1e-12

static void fill(gsl_rng *r, gsl_matrix *m)
{
  for (size_t i = 0; i < m->size1; i++)
    for (size_t j = 0; j < m->size2; j++)
      gsl_matrix_set(m, i, j, 2.0 * gsl_rng_uniform(r) - 1.0);
}

static double max_abs(const double *x, size_t n)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++)
    if (fabs(x[i]) > m)
      m = fabs(x[i]);
  return m;
}

static void assert_close_max(const char *what, const double *x, const double *ref, size_t n)
{
  double scale = max_abs(ref, n);
  ck_assert_msg(scale > 0.0, "%s: reference is all zero", what);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabs(x[i] - ref[i]) <= PART_RTOL * scale, "%s[%zu] = %.17g, serial %.17g (max %.3g)", what, i,
                  x[i], ref[i], scale);
}

START_TEST(test_transformer_layout)
{
  /* 12h^2 + 13h (Narayanan et al. 2021, sec. 5.1, P per layer before embeddings) */
  ck_assert_uint_eq(transformer_n_params(16), 12 * 256 + 13 * 16);
  ck_assert_uint_eq(transformer_n_params(3072), 12ul * 3072 * 3072 + 13 * 3072);
  transformer_layout l;
  transformer_layout_of(8, &l);
  ck_assert_uint_eq(l.b2 + 8, l.total);
  ck_assert_uint_eq(l.W1, l.ln2_b + 8);
  /* Megatron's 8.3B layer at b = 8, s = 1024, h = 3072: 24*8*1024*3072^2 + 4*8*1024^2*3072,
   * computed by hand = 1,855,425,871,872 + 103,079,215,104 */
  transformer_dims d = {8, 1024, 3072, 32};
  ck_assert_double_eq(transformer_layer_flops(&d), 1958505086976.0);
  transformer_dims bad = {2, 4, 10, 4};
  ck_assert_int_eq(transformer_dims_check(&bad), -1);
  ck_assert_ptr_null(transformer_part_create(&bad, 1, 0, 0));
  transformer_dims ok = {2, 6, 16, 4};
  ck_assert_ptr_null(transformer_part_create(&ok, 3, 0, 0)); /* heads % t */
  ck_assert_ptr_null(transformer_part_create(&ok, 4, 0, 1)); /* s % t with SP */
  ck_assert_ptr_null(transformer_part_create(&ok, 2, 2, 0)); /* r >= t */
  transformer_part *p = transformer_part_create(&ok, 4, 0, 0);
  ck_assert_ptr_nonnull(p);
  transformer_part_free(p);
  transformer_part_free(NULL);
}
END_TEST

/* L = sum(dZ .* Z): dL/dZ = dZ, so backward's dX and grad are L's exact gradient. */
static double probe_loss(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X, const gsl_matrix *dZ)
{
  gsl_matrix *Z = gsl_matrix_alloc(X->size1, X->size2);
  ck_assert_int_eq(transformer_layer_forward(d, w, X, Z), 0);
  double L = 0.0;
  for (size_t i = 0; i < Z->size1 * Z->size2; i++)
    L += Z->data[i] * dZ->data[i];
  gsl_matrix_free(Z);
  return L;
}

START_TEST(test_transformer_gradient)
{
  transformer_dims d = {2, 3, 8, 2};
  size_t n = d.b * d.s;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  gsl_vector *w = gsl_vector_alloc(transformer_n_params(d.h)), *g = gsl_vector_alloc(w->size);
  transformer_init_params(d.h, r, w);
  /* non-trivial LayerNorm parameters, so their gradients are exercised */
  transformer_layout l;
  transformer_layout_of(d.h, &l);
  for (size_t i = 0; i < d.h; i++) {
    gsl_vector_set(w, l.ln1_g + i, 1.0 + 0.3 * (2.0 * gsl_rng_uniform(r) - 1.0));
    gsl_vector_set(w, l.ln2_b + i, 0.2 * (2.0 * gsl_rng_uniform(r) - 1.0));
  }
  gsl_matrix *X = gsl_matrix_alloc(n, d.h), *dZ = gsl_matrix_alloc(n, d.h), *dX = gsl_matrix_alloc(n, d.h);
  fill(r, X);
  fill(r, dZ);
  ck_assert_int_eq(transformer_layer_backward(&d, w, X, dZ, dX, g), 0);
  for (size_t i = 0; i < w->size; i++) {
    double w0 = gsl_vector_get(w, i);
    gsl_vector_set(w, i, w0 + FD_STEP);
    double lp = probe_loss(&d, w, X, dZ);
    gsl_vector_set(w, i, w0 - FD_STEP);
    double lm = probe_loss(&d, w, X, dZ);
    gsl_vector_set(w, i, w0);
    double fd = (lp - lm) / (2.0 * FD_STEP);
    ck_assert_msg(fabs(fd - g->data[i]) <= FD_RTOL * fabs(fd) + FD_ATOL, "grad[%zu] = %.12g, fd %.12g", i,
                  g->data[i], fd);
  }
  for (size_t i = 0; i < n * d.h; i++) {
    double x0 = X->data[i];
    X->data[i] = x0 + FD_STEP;
    double lp = probe_loss(&d, w, X, dZ);
    X->data[i] = x0 - FD_STEP;
    double lm = probe_loss(&d, w, X, dZ);
    X->data[i] = x0;
    double fd = (lp - lm) / (2.0 * FD_STEP);
    ck_assert_msg(fabs(fd - dX->data[i]) <= FD_RTOL * fabs(fd) + FD_ATOL, "dX[%zu] = %.12g, fd %.12g", i,
                  dX->data[i], fd);
  }
  gsl_matrix_free(X);
  gsl_matrix_free(dZ);
  gsl_matrix_free(dX);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_rng_free(r);
}
END_TEST

/* ---- in-memory collectives over the t ranks' n x h buffers ---- */

static void mem_allgather(transformer_part **p, size_t t, transformer_buf b, size_t n, size_t h)
{
  size_t blk = n * h / t;
  for (size_t r = 0; r < t; r++)
    for (size_t q = 0; q < t; q++)
      if (q != r)
        memcpy(transformer_part_buf(p[r], b) + q * blk, transformer_part_buf(p[q], b) + q * blk, blk * sizeof(double));
}

/* g forward / f backward: rank-order sums; plain, every rank gets all; SP, its own block. */
static void mem_reduce(transformer_part **p, size_t t, int sp, size_t n, size_t h)
{
  size_t m = n * h, blk = m / t;
  double *sum = calloc(m, sizeof(double));
  for (size_t r = 0; r < t; r++)
    for (size_t i = 0; i < m; i++)
      sum[i] += transformer_part_buf(p[r], TRANSFORMER_RED)[i];
  for (size_t r = 0; r < t; r++)
    if (sp)
      memcpy(transformer_part_buf(p[r], TRANSFORMER_RED) + r * blk, sum + r * blk, blk * sizeof(double));
    else
      memcpy(transformer_part_buf(p[r], TRANSFORMER_RED), sum, m * sizeof(double));
  free(sum);
}

/* One layer forward and backward on t ranks; Z, dX, grad assembled from the ranks. */
#define LOC(M, r) (transformer_part_rows(p[r], &row0, &rows), gsl_matrix_submatrix((M), row0, 0, rows, h))
#define CLOC(M, r) (transformer_part_rows(p[r], &row0, &rows), gsl_matrix_const_submatrix((M), row0, 0, rows, h))

/* run_tp's forward pass over the t parts p: Z, each rank its rows (sp) or all of them. */
static void run_tp_forward(transformer_part **p, const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X,
                           size_t t, int sp, gsl_matrix *Z)
{
  size_t n = d->b * d->s, h = d->h, row0, rows;
  for (size_t r = 0; r < t; r++) {
    gsl_matrix_const_view x = CLOC(X, r);
    transformer_fwd_ln1(p[r], w, &x.matrix);
  }
  if (sp)
    mem_allgather(p, t, TRANSFORMER_XN, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_fwd_attn(p[r], w);
  mem_reduce(p, t, sp, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_fwd_ln2(p[r], w);
  if (sp)
    mem_allgather(p, t, TRANSFORMER_YN, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_fwd_mlp(p[r], w);
  mem_reduce(p, t, sp, n, h);
  for (size_t r = 0; r < t; r++) {
    gsl_matrix_view z = LOC(Z, r);
    if (sp) {
      transformer_fwd_out(p[r], w, &z.matrix);
    } else { /* plain: every rank holds all of Z; they must agree exactly */
      gsl_matrix *zr = gsl_matrix_alloc(n, h);
      transformer_fwd_out(p[r], w, zr);
      if (r == 0)
        gsl_matrix_memcpy(Z, zr);
      else
        ck_assert_int_eq(memcmp(zr->data, Z->data, n * h * sizeof(double)), 0);
      gsl_matrix_free(zr);
    }
  }
}

/* run_tp's backward pass: dX and each rank's gradient g[r]. */
static void run_tp_backward(transformer_part **p, gsl_vector **g, const transformer_dims *d, const gsl_vector *w,
                            const gsl_matrix *dZ, size_t t, int sp, gsl_matrix *dX)
{
  size_t n = d->b * d->s, h = d->h, row0, rows;
  for (size_t r = 0; r < t; r++) {
    gsl_matrix_const_view dz = CLOC(dZ, r);
    transformer_bwd_out(p[r], &dz.matrix, g[r]);
  }
  if (sp)
    mem_allgather(p, t, TRANSFORMER_DFULL, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_bwd_mlp(p[r], w, g[r]);
  mem_reduce(p, t, sp, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_bwd_ln2(p[r], w, g[r]);
  if (sp)
    mem_allgather(p, t, TRANSFORMER_DFULL, n, h);
  for (size_t r = 0; r < t; r++)
    transformer_bwd_attn(p[r], w, g[r]);
  mem_reduce(p, t, sp, n, h);
  for (size_t r = 0; r < t; r++) {
    gsl_matrix_view dx = LOC(dX, r);
    if (sp) {
      transformer_bwd_ln1(p[r], w, g[r], &dx.matrix);
    } else {
      gsl_matrix *dxr = gsl_matrix_alloc(n, h);
      transformer_bwd_ln1(p[r], w, g[r], dxr);
      if (r == 0)
        gsl_matrix_memcpy(dX, dxr);
      else
        ck_assert_int_eq(memcmp(dxr->data, dX->data, n * h * sizeof(double)), 0);
      gsl_matrix_free(dxr);
    }
  }
}
#undef LOC
#undef CLOC

static void run_tp(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X, const gsl_matrix *dZ, size_t t,
                   int sp, gsl_matrix *Z, gsl_matrix *dX, gsl_vector *grad)
{
  size_t h = d->h;
  transformer_part *p[4];
  gsl_vector *g[4];
  for (size_t r = 0; r < t; r++) {
    p[r] = transformer_part_create(d, t, r, sp);
    ck_assert_ptr_nonnull(p[r]);
    g[r] = gsl_vector_calloc(w->size);
  }
  run_tp_forward(p, d, w, X, t, sp, Z);
  run_tp_backward(p, g, d, w, dZ, t, sp, dX);
  if (!sp) { /* replicated parameters' gradients are full and equal on every rank */
    transformer_layout l;
    transformer_layout_of(h, &l);
    for (size_t r = 1; r < t; r++) {
      ck_assert_int_eq(memcmp(g[r]->data + l.ln1_g, g[0]->data + l.ln1_g, 2 * h * sizeof(double)), 0);
      ck_assert_int_eq(memcmp(g[r]->data + l.bo, g[0]->data + l.bo, h * sizeof(double)), 0);
      ck_assert_int_eq(memcmp(g[r]->data + l.ln2_g, g[0]->data + l.ln2_g, 2 * h * sizeof(double)), 0);
      ck_assert_int_eq(memcmp(g[r]->data + l.b2, g[0]->data + l.b2, h * sizeof(double)), 0);
    }
  }
  transformer_grad_combine(h, t, sp, (const gsl_vector *const *)g, grad);
  for (size_t r = 0; r < t; r++) {
    transformer_part_free(p[r]);
    gsl_vector_free(g[r]);
  }
}

static void check_partition(int sp)
{
  /* 4 heads of 4 over 2 sequences of 8 positions: t = 4 gives each rank one head and,
   * with SP, 2 positions of each sequence */
  transformer_dims d = {2, 8, 16, 4};
  size_t n = d.b * d.s, h = d.h;
  transformer_layout l;
  transformer_layout_of(h, &l);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  gsl_vector *w = gsl_vector_alloc(transformer_n_params(h)), *g = gsl_vector_alloc(w->size),
             *gt = gsl_vector_alloc(w->size);
  transformer_init_params(h, r, w);
  for (size_t i = 0; i < h; i++)
    gsl_vector_set(w, l.ln2_g + i, 1.0 + 0.3 * (2.0 * gsl_rng_uniform(r) - 1.0));
  gsl_matrix *X = gsl_matrix_alloc(n, h), *dZ = gsl_matrix_alloc(n, h), *Z = gsl_matrix_alloc(n, h),
             *dX = gsl_matrix_alloc(n, h), *Zt = gsl_matrix_alloc(n, h), *dXt = gsl_matrix_alloc(n, h);
  fill(r, X);
  fill(r, dZ);
  ck_assert_int_eq(transformer_layer_forward(&d, w, X, Z), 0);
  ck_assert_int_eq(transformer_layer_backward(&d, w, X, dZ, dX, g), 0);
  const struct { const char *name; size_t off, len; } blocks[] = {
      {"ln1_g", l.ln1_g, h}, {"ln1_b", l.ln1_b, h}, {"Wq", l.Wq, h * h}, {"Wk", l.Wk, h * h},
      {"Wv", l.Wv, h * h},   {"bq", l.bq, h},       {"bk", l.bk, h},     {"bv", l.bv, h},
      {"Wo", l.Wo, h * h},   {"bo", l.bo, h},       {"ln2_g", l.ln2_g, h}, {"ln2_b", l.ln2_b, h},
      {"W1", l.W1, 4 * h * h}, {"b1", l.b1, 4 * h}, {"W2", l.W2, 4 * h * h}, {"b2", l.b2, h}};
  for (size_t t = 1; t <= 4; t *= 2) {
    gsl_matrix_set_all(Zt, NAN);
    gsl_matrix_set_all(dXt, NAN);
    run_tp(&d, w, X, dZ, t, sp, Zt, dXt, gt);
    assert_close_max("Z", Zt->data, Z->data, n * h);
    assert_close_max("dX", dXt->data, dX->data, n * h);
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++)
      if (blocks[k].off != l.bk)
        assert_close_max(blocks[k].name, gt->data + blocks[k].off, g->data + blocks[k].off, blocks[k].len);
    /* dL/dbk is exactly 0 (bk adds q.bk to every score of a row, which softmax cancels):
     * both sides are rounding noise, bounded against the scale of dL/dbq */
    double sq = max_abs(g->data + l.bq, h);
    ck_assert_double_le(max_abs(g->data + l.bk, h), PART_RTOL * sq);
    ck_assert_double_le(max_abs(gt->data + l.bk, h), PART_RTOL * sq);
  }
  gsl_matrix *m[] = {X, dZ, Z, dX, Zt, dXt};
  for (size_t i = 0; i < 6; i++)
    gsl_matrix_free(m[i]);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_vector_free(gt);
  gsl_rng_free(r);
}

START_TEST(test_transformer_partition)
{
  check_partition(0);
}
END_TEST

START_TEST(test_transformer_partition_seqpar)
{
  check_partition(1);
}
END_TEST

/* A column-parallel GEMM with gather_output: each rank's X A[:, block] gathered by
 * columns equals X A (the same k-order dot products, so exactly). */
START_TEST(test_transformer_gather_output)
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 3);
  gsl_matrix *X = gsl_matrix_alloc(6, 5), *A = gsl_matrix_alloc(5, 8), *Y = gsl_matrix_alloc(6, 8),
             *G = gsl_matrix_alloc(6, 8);
  fill(r, X);
  fill(r, A);
  for (size_t i = 0; i < 6; i++)
    for (size_t j = 0; j < 8; j++) {
      double a = 0.0;
      for (size_t k = 0; k < 5; k++)
        a += gsl_matrix_get(X, i, k) * gsl_matrix_get(A, k, j);
      gsl_matrix_set(Y, i, j, a);
    }
  gsl_matrix *part[4];
  for (size_t q = 0; q < 4; q++) {
    part[q] = gsl_matrix_alloc(6, 2);
    for (size_t i = 0; i < 6; i++)
      for (size_t j = 0; j < 2; j++) {
        double a = 0.0;
        for (size_t k = 0; k < 5; k++)
          a += gsl_matrix_get(X, i, k) * gsl_matrix_get(A, k, q * 2 + j);
        gsl_matrix_set(part[q], i, j, a);
      }
  }
  ck_assert_int_eq(transformer_gather_columns(4, (const gsl_matrix *const *)part, G), 0);
  ck_assert_int_eq(memcmp(G->data, Y->data, 48 * sizeof(double)), 0);
  ck_assert_int_eq(transformer_gather_columns(3, (const gsl_matrix *const *)part, G), -1);
  for (size_t q = 0; q < 4; q++)
    gsl_matrix_free(part[q]);
  gsl_matrix_free(X);
  gsl_matrix_free(A);
  gsl_matrix_free(Y);
  gsl_matrix_free(G);
  gsl_rng_free(r);
}
END_TEST

static Suite *transformer_suite(void)
{
  Suite *s = suite_create("transformer");
  ADD_TCASE(s, "layout", test_transformer_layout);
  ADD_TCASE(s, "gradient", test_transformer_gradient);
  ADD_TCASE(s, "partition", test_transformer_partition, test_transformer_partition_seqpar,
            test_transformer_gather_output);
  return s;
}

CHECK_MAIN(transformer_suite)

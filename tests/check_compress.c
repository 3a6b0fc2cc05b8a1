/* check_compress.c - Check suite for models/compress: top-k with error feedback sends
 * exactly the residual-corrected top k and keeps exactly the rest, DGC's momentum
 * correction and warm-up, 1-bit keeps each row's sums, QSGD is unbiased, PowerSGD's
 * factors give the rank-r projection computed directly, and the wire sizes. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>

#include "models/compress.h"
#include "models/rng.h"

#include "check_util.h"
#include "topk_ref.h"

static void fill_gaussian(double *x, size_t n, gsl_rng *r)
{
  for (size_t i = 0; i < n; i++)
    x[i] = gsl_ran_gaussian(r, 1.0);
}

/* Four steps of top-k 10% on 200 elements: each message is exactly the top k of residual +
 * g (indices increasing, values copied), and the new residual is exactly what was not sent
 * (0 where sent): equalities, no tolerance. */
START_TEST(test_topk_error_feedback)
{
  enum { N = 200 };
  compress_params p = {.method = COMPRESS_TOPK, .ratio = 0.1};
  compress_state *s = compress_state_create(&p, 10, 20, NULL);
  compress_msg m;
  compress_msg_alloc(s, &m);
  gsl_rng *r = rng_create(7, RNG_ROLE_DATA, 0);
  double g[N], v[N];
  unsigned char mark[N];
  for (long step = 0; step < 4; step++) {
    fill_gaussian(g, N, r);
    for (size_t i = 0; i < N; i++)
      v[i] = compress_residual(s)[i] + g[i];
    compress_encode(s, g, step, NULL, &m);
    ck_assert_uint_eq(m.k, 20);
    topk_ref(v, N, 20, mark);
    for (size_t j = 0; j < m.k; j++) {
      ck_assert(mark[m.idx[j]]);
      ck_assert(m.val[j] == v[m.idx[j]]);
      if (j)
        ck_assert_uint_lt(m.idx[j - 1], m.idx[j]);
    }
    for (size_t i = 0; i < N; i++)
      ck_assert(compress_residual(s)[i] == (mark[i] ? 0 : v[i]));
  }
  gsl_rng_free(r);
  compress_msg_release(&m);
  compress_state_free(s);
}
END_TEST

/* Ties: 600 entries of only 7 magnitudes (both signs), so the k-th largest is shared by
 * many; at k = 1, 50, 299, 600 (ratio k / 600) the selection is brute_topk's set exactly
 * (equal magnitudes to the lower index), whatever order the quickselect left its scratch. */
START_TEST(test_topk_ties)
{
  enum { N = 600 };
  static const size_t ks[] = {1, 50, 299, N};
  gsl_rng *r = rng_create(11, RNG_ROLE_DATA, 0);
  double g[N];
  unsigned char mark[N];
  for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
    compress_params p = {.method = COMPRESS_TOPK, .ratio = (double)ks[c] / N};
    compress_state *s = compress_state_create(&p, 1, N, NULL);
    compress_msg m;
    compress_msg_alloc(s, &m);
    for (size_t i = 0; i < N; i++)
      g[i] = (double)gsl_rng_uniform_int(r, 7) * (gsl_rng_uniform(r) < 0.5 ? -0.25 : 0.25);
    compress_encode(s, g, 0, NULL, &m);
    ck_assert_uint_eq(m.k, ks[c]);
    topk_ref(g, N, ks[c], mark);
    size_t marked = 0;
    for (size_t j = 0; j < m.k; j++) {
      ck_assert_msg(mark[m.idx[j]], "k = %zu: index %u sent, not in the top k", ks[c], m.idx[j]);
      if (j)
        ck_assert_uint_lt(m.idx[j - 1], m.idx[j]);
    }
    for (size_t i = 0; i < N; i++)
      marked += mark[i];
    ck_assert_uint_eq(marked, m.k);
    compress_msg_release(&m);
    compress_state_free(s);
  }
  gsl_rng_free(r);
}
END_TEST

/* DGC's momentum correction (Lin et al. sec. 3.2) computed by hand beside the state:
 * u = m u + g, v = v + u, send top k of v, zero v and u where sent. */
START_TEST(test_topk_momentum_correction)
{
  enum { N = 50 };
  compress_params p = {.method = COMPRESS_TOPK, .ratio = 0.1, .momentum = 0.9};
  compress_state *s = compress_state_create(&p, 1, N, NULL);
  compress_msg m;
  compress_msg_alloc(s, &m);
  gsl_rng *r = rng_create(8, RNG_ROLE_DATA, 0);
  double g[N], u[N] = {0}, v[N] = {0};
  unsigned char mark[N];
  for (long step = 0; step < 5; step++) {
    fill_gaussian(g, N, r);
    for (size_t i = 0; i < N; i++) {
      u[i] = 0.9 * u[i] + g[i];
      v[i] += u[i];
    }
    compress_encode(s, g, step, NULL, &m);
    topk_ref(v, N, 5, mark);
    ck_assert_uint_eq(m.k, 5);
    for (size_t j = 0; j < m.k; j++) {
      ck_assert(mark[m.idx[j]]);
      ck_assert(m.val[j] == v[m.idx[j]]);
    }
    for (size_t i = 0; i < N; i++)
      if (mark[i])
        u[i] = v[i] = 0;
    for (size_t i = 0; i < N; i++)
      ck_assert(compress_residual(s)[i] == v[i]);
  }
  gsl_rng_free(r);
  compress_msg_release(&m);
  compress_state_free(s);
}
END_TEST

/* The warm-up of Lin et al. sec. 3.3 over 8 steps: 25%, 6.25%, 1.5625%, 0.390625% two
 * steps each, then the ratio; never below the ratio. */
START_TEST(test_dgc_warmup)
{
  compress_params p = {.method = COMPRESS_TOPK, .ratio = 0.001, .warmup_steps = 8};
  const double want[] = {0.25, 0.25, 0.0625, 0.0625, 0.015625, 0.015625, 0.00390625, 0.00390625, 0.001, 0.001};
  for (long t = 0; t < 10; t++)
    ck_assert_double_eq(compress_density(&p, t), want[t]);
  p.ratio = 0.1;
  ck_assert_double_eq(compress_density(&p, 3), 0.1);
  ck_assert_uint_eq(compress_topk_k(&p, 1000, 0), 250);
  p.warmup_steps = 0;
  ck_assert_uint_eq(compress_topk_k(&p, 1000, 0), 100);
  ck_assert_uint_eq(compress_topk_k(&p, 3, 0), 1); /* ceil(0.3), at least one */
}
END_TEST

/* 1-bit (Seide et al.): per row, the decoding plus the new residual gives back residual + g
 * (to rounding of the means: 1e-12 relative to the row's largest entry, a few ulps of a
 * mean of 30 doubles), and the decoded row sums the row. */
START_TEST(test_onebit_rows)
{
  enum { ROWS = 4, COLS = 30, N = ROWS * COLS };
  compress_params p = {.method = COMPRESS_ONEBIT};
  compress_state *s = compress_state_create(&p, ROWS, COLS, NULL);
  compress_msg m;
  compress_msg_alloc(s, &m);
  gsl_rng *r = rng_create(9, RNG_ROLE_DATA, 0);
  double g[N], v[N], out[N];
  for (long step = 0; step < 3; step++) {
    fill_gaussian(g, N, r);
    for (size_t i = 0; i < N; i++)
      v[i] = compress_residual(s)[i] + g[i];
    compress_encode(s, g, step, NULL, &m);
    memset(out, 0, sizeof out);
    compress_decode_add(&m, out);
    for (size_t row = 0; row < ROWS; row++) {
      double sum_v = 0, sum_out = 0, big = 0;
      for (size_t j = 0; j < COLS; j++) {
        size_t i = row * COLS + j;
        ck_assert_double_eq_tol(out[i] + compress_residual(s)[i], v[i], 1e-12 * (1 + fabs(v[i])));
        ck_assert((out[i] >= 0) == (v[i] >= 0));
        sum_v += v[i];
        sum_out += out[i];
        big = fmax(big, fabs(v[i]));
      }
      ck_assert_double_eq_tol(sum_out, sum_v, 1e-12 * COLS * big);
    }
  }
  ck_assert_double_eq(compress_wire_bytes(&p, ROWS, COLS, 0, 4), 15 + 2 * 4 * 4); /* 120 bits, 8 scales */
  gsl_rng_free(r);
  compress_msg_release(&m);
  compress_state_free(s);
}
END_TEST

/* QSGD is unbiased: the mean of D decodings of one vector (each from a fresh state, so no
 * residual) is within 5 standard errors of it. A level is l or l + 1 with Bernoulli(a - l),
 * so each decoded entry's variance is at most (norm / s)^2 / 4 (Alistarh et al. Lemma 3.1's
 * per-coordinate bound): the standard error is norm / (2 s sqrt(D)). */
START_TEST(test_qsgd_unbiased)
{
  enum { N = 16, D = 20000 };
  compress_params p = {.method = COMPRESS_QSGD, .levels = 4};
  gsl_rng *data = rng_create(10, RNG_ROLE_DATA, 0), *draws = rng_create(10, RNG_ROLE_WORKER, 0);
  double g[N], mean[N] = {0}, out[N], norm = 0;
  fill_gaussian(g, N, data);
  for (size_t i = 0; i < N; i++)
    norm += g[i] * g[i];
  norm = sqrt(norm);
  for (int d = 0; d < D; d++) {
    compress_state *s = compress_state_create(&p, 1, N, NULL);
    compress_msg m;
    compress_msg_alloc(s, &m);
    compress_encode(s, g, 0, draws, &m);
    ck_assert_double_eq(m.scale[0], norm);
    memset(out, 0, sizeof out);
    compress_decode_add(&m, out);
    for (size_t i = 0; i < N; i++) {
      ck_assert_int_le(abs(m.level[i]), 4);
      mean[i] += out[i] / D;
    }
    compress_msg_release(&m);
    compress_state_free(s);
  }
  double se = norm / (2 * 4 * sqrt((double)D));
  for (size_t i = 0; i < N; i++)
    ck_assert_double_eq_tol(mean[i], g[i], 5 * se);
  ck_assert_double_eq(compress_wire_bytes(&p, 1, N, 0, 4), 8 + 4); /* 16 x (1 + 3) bits, the norm */
  gsl_rng_free(data);
  gsl_rng_free(draws);
}
END_TEST

/* PowerSGD on one rank: the factors' product P Q^T equals the rank-r update computed
 * directly, U U^T M with U the orthonormal basis of M Q0 from GSL's Householder QR (an
 * independent route to the same projection); the residual is M - P Q^T. Tolerance 1e-10:
 * both sides are products of well-conditioned factors of entries O(10). */
START_TEST(test_powersgd_projection)
{
  enum { ROWS = 12, COLS = 9, R = 3 };
  compress_params p = {.method = COMPRESS_POWERSGD, .rank = R};
  ck_assert(compress_powersgd_applies(&p, ROWS, COLS));
  gsl_rng *init = rng_create(11, RNG_ROLE_INIT, 0), *init2 = rng_create(11, RNG_ROLE_INIT, 0);
  gsl_rng *data = rng_create(11, RNG_ROLE_DATA, 0);
  compress_state *s = compress_state_create(&p, ROWS, COLS, init);
  double g[ROWS * COLS], P[ROWS * R], Q[COLS * R], out[ROWS * COLS], q0[COLS * R];
  fill_gaussian(g, ROWS * COLS, data);
  for (size_t i = 0; i < COLS * R; i++)
    q0[i] = gsl_ran_gaussian(init2, 1.0);
  compress_powersgd_p(s, g, P);
  compress_powersgd_q(s, P, Q);
  compress_powersgd_decode(s, P, Q, out);
  /* directly: A = M Q0, QR, U = first R columns of the thin Q, then U U^T M */
  gsl_matrix_view M = gsl_matrix_view_array(g, ROWS, COLS), Q0 = gsl_matrix_view_array(q0, COLS, R);
  gsl_matrix *A = gsl_matrix_alloc(ROWS, R), *Uf = gsl_matrix_alloc(ROWS, ROWS), *Rf = gsl_matrix_alloc(ROWS, R);
  gsl_matrix *UtM = gsl_matrix_alloc(R, COLS), *want = gsl_matrix_alloc(ROWS, COLS);
  gsl_vector *tau = gsl_vector_alloc(R);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &M.matrix, &Q0.matrix, 0.0, A);
  gsl_linalg_QR_decomp(A, tau);
  gsl_linalg_QR_unpack(A, tau, Uf, Rf);
  gsl_matrix_view U = gsl_matrix_submatrix(Uf, 0, 0, ROWS, R);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &U.matrix, &M.matrix, 0.0, UtM);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &U.matrix, UtM, 0.0, want);
  for (size_t i = 0; i < ROWS; i++)
    for (size_t j = 0; j < COLS; j++) {
      ck_assert_double_eq_tol(out[i * COLS + j], gsl_matrix_get(want, i, j), 1e-10);
      ck_assert_double_eq_tol(compress_residual(s)[i * COLS + j], g[i * COLS + j] - out[i * COLS + j], 1e-10);
    }
  /* P is orthonormal */
  for (size_t a = 0; a < R; a++)
    for (size_t b = 0; b < R; b++) {
      double dot = 0;
      for (size_t i = 0; i < ROWS; i++)
        dot += P[i * R + a] * P[i * R + b];
      ck_assert_double_eq_tol(dot, a == b, 1e-12);
    }
  ck_assert_double_eq(compress_wire_bytes(&p, ROWS, COLS, 0, 4), R * (ROWS + COLS) * 4);
  ck_assert(!compress_powersgd_applies(&p, 1, 100));
  ck_assert(!compress_powersgd_applies(&p, 4, 4)); /* 3 x 8 factors are larger than 16 */
  gsl_matrix_free(A);
  gsl_matrix_free(Uf);
  gsl_matrix_free(Rf);
  gsl_matrix_free(UtM);
  gsl_matrix_free(want);
  gsl_vector_free(tau);
  gsl_rng_free(init);
  gsl_rng_free(init2);
  gsl_rng_free(data);
  compress_state_free(s);
}
END_TEST

/* PowerSGD over two ranks with the sums done by hand: the decoded update is the sum of
 * each rank's projection P P^T M_r onto the common P (tolerance 1e-10 as above). */
START_TEST(test_powersgd_two_ranks)
{
  enum { ROWS = 8, COLS = 6, R = 2, N = ROWS * COLS };
  compress_params p = {.method = COMPRESS_POWERSGD, .rank = R};
  gsl_rng *i0 = rng_create(12, RNG_ROLE_INIT, 0), *i1 = rng_create(12, RNG_ROLE_INIT, 0);
  gsl_rng *data = rng_create(12, RNG_ROLE_DATA, 0);
  compress_state *s[2] = {compress_state_create(&p, ROWS, COLS, i0), compress_state_create(&p, ROWS, COLS, i1)};
  double g[2][N], P[2][ROWS * R], Q[2][COLS * R], out[2][N];
  fill_gaussian(g[0], N, data);
  fill_gaussian(g[1], N, data);
  for (int k = 0; k < 2; k++)
    compress_powersgd_p(s[k], g[k], P[k]);
  for (size_t i = 0; i < ROWS * R; i++)
    P[0][i] = P[1][i] = P[0][i] + P[1][i];
  for (int k = 0; k < 2; k++)
    compress_powersgd_q(s[k], P[k], Q[k]);
  for (size_t i = 0; i < COLS * R; i++)
    Q[0][i] = Q[1][i] = Q[0][i] + Q[1][i];
  for (int k = 0; k < 2; k++)
    compress_powersgd_decode(s[k], P[k], Q[k], out[k]);
  for (size_t i = 0; i < ROWS; i++)
    for (size_t j = 0; j < COLS; j++) {
      double want = 0;
      for (int k = 0; k < 2; k++)
        for (size_t a = 0; a < R; a++)
          for (size_t t = 0; t < ROWS; t++)
            want += P[0][i * R + a] * P[0][t * R + a] * g[k][t * COLS + j];
      ck_assert_double_eq_tol(out[0][i * COLS + j], want, 1e-10);
      ck_assert(out[0][i * COLS + j] == out[1][i * COLS + j]);
    }
  compress_state_free(s[0]);
  compress_state_free(s[1]);
  gsl_rng_free(i0);
  gsl_rng_free(i1);
  gsl_rng_free(data);
}
END_TEST

/* Wire sizes and refusals. */
START_TEST(test_sizes)
{
  compress_params p = {.method = COMPRESS_TOPK, .ratio = 0.01};
  ck_assert_double_eq(compress_wire_bytes(&p, 100, 100, 0, 4), 100 * (4 + 4)); /* 100 indices and values */
  ck_assert_double_eq(compress_wire_bytes(&p, 100, 100, 0, 2), 100 * (4 + 2));
  p.method = COMPRESS_NONE;
  ck_assert_double_eq(compress_wire_bytes(&p, 100, 100, 0, 4), 40000);
  ck_assert_ptr_null(compress_state_create(&p, 3, 3, NULL));
  p.method = COMPRESS_TOPK;
  p.ratio = 0;
  ck_assert_ptr_null(compress_state_create(&p, 3, 3, NULL));
  p.method = COMPRESS_QSGD;
  p.levels = 0;
  ck_assert_ptr_null(compress_state_create(&p, 3, 3, NULL));
  compress_method m;
  ck_assert_int_eq(compress_method_parse("powersgd", &m), 0);
  ck_assert_int_eq(m, COMPRESS_POWERSGD);
  ck_assert_int_eq(compress_method_parse("dgc", &m), -1);
  ck_assert_str_eq(compress_method_name(COMPRESS_ONEBIT), "onebit");
}
END_TEST

/* A message placed in one block (compress_msg_place) holds what an allocated one holds: the
 * same encoding of the same gradient, for 1-bit (3 x 8: 6 scales, 24 bits), QSGD (a norm, 24
 * levels) and top-k (at step 0 of a warm-up of 4: 25% of 24, 6 entries, sized exactly). */
START_TEST(test_msg_place)
{
  const compress_params ps[] = {{.method = COMPRESS_ONEBIT},
                                {.method = COMPRESS_QSGD, .levels = 7},
                                {.method = COMPRESS_TOPK, .ratio = 0.1, .warmup_steps = 4}};
  const size_t bytes[] = {6 * 8 + 24, 8 + 24 * sizeof(int), 6 * (8 + 4)};
  gsl_rng *gr = rng_create(3, RNG_ROLE_DATA, 0);
  double g[24], a[24], b[24];
  fill_gaussian(g, 24, gr);
  for (size_t t = 0; t < 3; t++) {
    compress_state *sa = compress_state_create(&ps[t], 3, 8, NULL), *sb = compress_state_create(&ps[t], 3, 8, NULL);
    gsl_rng *ra = rng_create(5, RNG_ROLE_QSGD, 0), *rb = rng_create(5, RNG_ROLE_QSGD, 0);
    compress_msg ma, mb;
    compress_msg_alloc(sa, &ma);
    size_t n = compress_msg_place(sb, 0, NULL, NULL);
    ck_assert_uint_eq(n, bytes[t]);
    double *block = malloc(n);
    ck_assert_uint_eq(compress_msg_place(sb, 0, &mb, block), n);
    compress_encode(sa, g, 0, ra, &ma);
    compress_encode(sb, g, 0, rb, &mb);
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    compress_decode_add(&ma, a);
    compress_decode_add(&mb, b);
    for (size_t i = 0; i < 24; i++)
      ck_assert(a[i] == b[i]);
    free(block);
    compress_msg_release(&ma);
    compress_state_free(sa);
    compress_state_free(sb);
    gsl_rng_free(ra);
    gsl_rng_free(rb);
  }
  gsl_rng_free(gr);
}
END_TEST

static Suite *compress_suite(void)
{
  Suite *s = suite_create("compress");
  ADD_TCASE(s, "topk", test_topk_error_feedback, test_topk_ties, test_topk_momentum_correction, test_dgc_warmup);
  ADD_TCASE(s, "quantisation", test_onebit_rows, test_qsgd_unbiased);
  ADD_TCASE(s, "powersgd", test_powersgd_projection, test_powersgd_two_ranks);
  ADD_TCASE(s, "sizes", test_sizes, test_msg_place);
  return s;
}

CHECK_MAIN(compress_suite)

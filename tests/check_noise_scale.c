/* check_noise_scale.c - Check suite for models/noise_scale: the gradient noise scale of a
 * linear model with squared error, whose |G|^2 and tr(Sigma) have closed forms, estimated
 * within its sampling error; the estimator's algebra against per-example gradients; and
 * the shapes it refuses. */

#include <check.h>
#include <math.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>

#include "models/net.h"
#include "models/noise_scale.h"
#include "models/rng.h"

#include "check_util.h"

/* The closed form. Rows x ~ N(0, I_d), y = w* . x + e with e ~ N(0, s^2); the model predicts
 * w . x + c with loss (pred - y)^2 / 2, at u = w - w* and c = 0. One example's gradient is
 * r (x, 1) with r = u . x - e, so G = E[r (x, 1)] = (u, 0) and |G|^2 = |u|^2; E|g|^2 =
 * E[r^2 |x|^2] + E[r^2] = (d + 2)|u|^2 + d s^2 + |u|^2 + s^2 (Isserlis: E[(u.x)^2 |x|^2] =
 * (d + 2)|u|^2), hence tr(Sigma) = (d + 2)|u|^2 + (d + 1) s^2. Here d = 4, u = (1, 0, 0, 0),
 * s = 1: |G|^2 = 1, tr(Sigma) = 11, B_simple = 11. */
#define DIM 4
#define TRUE_G2 1.0
#define TRUE_TRACE 11.0
#define ROWS 200000
#define SMALL 4
/* REL_TOL: with 50,000 batches of 4 rows, the mean of |g_4|^2 (expected 1 + 11/4) has a
 * relative standard error near 1% (each |g_4|^2 spreads by about its mean, over sqrt(5e4)),
 * and tr(Sigma) = (|g_4|^2 - |g_B|^2) / (1/4 - 1/B) carries it times 3.75 / 2.75; |G|^2 from
 * all 200,000 rows is within 0.5%. 5% is five standard errors of the ratio: a wrong term
 * (a missing 1/b, B for b, the bias left out) moves it by 25% or more. */
#define REL_TOL 0.05
/* TOL_ALGEBRA: the two ways of summing 6 per-example gradients of O(1) differ by rounding,
 * a few ulps of O(10) sums: 1e-12. */
#define TOL_ALGEBRA 1e-12

/* The linear model and its parameters at u = (1, 0, ..., 0), c = 0, w* = 0. */
static net *linear_model(gsl_vector **w)
{
  size_t sizes[2] = {DIM, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_MSE);
  ck_assert_ptr_nonnull(n);
  *w = gsl_vector_calloc(net_n_params(n)); /* W (1 x d) then b */
  gsl_vector_set(*w, 0, 1.0);
  return n;
}

/* rows examples of the closed form's distribution (w* = 0: y is the noise alone). */
static void draw(gsl_matrix *X, double *y, gsl_rng *r)
{
  for (size_t i = 0; i < X->size1; i++) {
    for (size_t j = 0; j < DIM; j++)
      gsl_matrix_set(X, i, j, gsl_ran_gaussian(r, 1.0));
    y[i] = gsl_ran_gaussian(r, 1.0);
  }
}

START_TEST(test_noise_scale_closed_form)
{
  gsl_vector *w;
  net *n = linear_model(&w);
  gsl_rng *r = rng_create(7, RNG_ROLE_DATA, 0);
  gsl_matrix *X = gsl_matrix_alloc(ROWS, DIM);
  double *y = malloc(ROWS * sizeof *y);
  draw(X, y, r);
  net_ws *ws = net_ws_create(n, SMALL);
  gsl_vector *g = gsl_vector_alloc(net_n_params(n));
  noise_scale ns;
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, SMALL, ws, g, &ns), 0);
  ck_assert_double_eq_tol(ns.grad_sq, TRUE_G2, REL_TOL * TRUE_G2);
  ck_assert_double_eq_tol(ns.trace_sigma, TRUE_TRACE, REL_TOL * TRUE_TRACE);
  ck_assert_double_eq_tol(ns.b_simple, TRUE_TRACE / TRUE_G2, REL_TOL * TRUE_TRACE / TRUE_G2);
  gsl_vector_free(g);
  net_ws_free(ws);
  free(y);
  gsl_matrix_free(X);
  gsl_rng_free(r);
  gsl_vector_free(w);
  net_free(n);
}
END_TEST

/* The estimator's formulas from per-example gradients computed one by one: 6 rows in 3
 * batches of 2. */
START_TEST(test_noise_scale_algebra)
{
  gsl_vector *w;
  net *n = linear_model(&w);
  gsl_rng *r = rng_create(8, RNG_ROLE_DATA, 0);
  gsl_matrix *X = gsl_matrix_alloc(6, DIM);
  double y[6];
  draw(X, y, r);
  net_ws *ws = net_ws_create(n, 2);
  size_t p = net_n_params(n);
  gsl_vector *g = gsl_vector_alloc(p), *gi = gsl_vector_alloc(p), *all = gsl_vector_calloc(p);
  double small_sq = 0;
  for (size_t k = 0; k < 3; k++) {
    gsl_vector *batch = gsl_vector_calloc(p);
    for (size_t i = 2 * k; i < 2 * k + 2; i++) {
      gsl_matrix_view row = gsl_matrix_submatrix(X, i, 0, 1, DIM);
      double loss;
      ck_assert_int_eq(net_loss_grad(n, w, &row.matrix, &y[i], ws, &loss, gi), 0);
      gsl_blas_daxpy(0.5, gi, batch);
      gsl_blas_daxpy(1.0 / 6, gi, all);
    }
    for (size_t j = 0; j < p; j++)
      small_sq += gsl_vector_get(batch, j) * gsl_vector_get(batch, j) / 3;
    gsl_vector_free(batch);
  }
  double big_sq = 0;
  for (size_t j = 0; j < p; j++)
    big_sq += gsl_vector_get(all, j) * gsl_vector_get(all, j);
  double g2 = (6 * big_sq - 2 * small_sq) / 4, trace = (small_sq - big_sq) / (0.5 - 1.0 / 6);
  noise_scale ns;
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, 2, ws, g, &ns), 0);
  ck_assert_double_eq_tol(ns.grad_sq, g2, TOL_ALGEBRA);
  ck_assert_double_eq_tol(ns.trace_sigma, trace, TOL_ALGEBRA);
  if (g2 > 0)
    ck_assert_double_eq_tol(ns.b_simple, trace / g2, TOL_ALGEBRA * fabs(trace / g2));
  else
    ck_assert(isinf(ns.b_simple));
  gsl_vector_free(all);
  gsl_vector_free(gi);
  gsl_vector_free(g);
  net_ws_free(ws);
  gsl_matrix_free(X);
  gsl_rng_free(r);
  gsl_vector_free(w);
  net_free(n);
}
END_TEST

/* Fewer than two batches, a zero batch, or scratch of the wrong size: -1. */
START_TEST(test_noise_scale_refuses)
{
  gsl_vector *w;
  net *n = linear_model(&w);
  gsl_matrix *X = gsl_matrix_calloc(7, DIM);
  double y[7] = {0};
  net_ws *ws = net_ws_create(n, 4);
  gsl_vector *g = gsl_vector_alloc(net_n_params(n)), *short_g = gsl_vector_alloc(2);
  noise_scale ns;
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, 4, ws, g, &ns), -1); /* 7 rows: one batch of 4 */
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, 0, ws, g, &ns), -1);
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, 2, ws, short_g, &ns), -1);
  ck_assert_int_eq(noise_scale_estimate(n, w, X, y, 3, ws, g, &ns), 0); /* two batches of 3, one row unused */
  gsl_vector_free(short_g);
  gsl_vector_free(g);
  net_ws_free(ws);
  gsl_matrix_free(X);
  gsl_vector_free(w);
  net_free(n);
}
END_TEST

Suite *noise_scale_suite(void)
{
  Suite *s = suite_create("noise_scale");
  ADD_TCASE(s, "estimate", test_noise_scale_closed_form, test_noise_scale_algebra, test_noise_scale_refuses);
  return s;
}

CHECK_MAIN(noise_scale_suite)

/* check_curvature.c - Check suite for models/curvature: the top Hessian eigenvalue of
 * quadratics whose spectrum is known (a rotated diagonal; one whose dominant eigenvalue is
 * negative), of a linear model's squared loss against its Hessian's eigenvalues computed
 * by GSL, and the delayed-gradient stability bound against the recurrence it bounds. */

#include <check.h>
#include <math.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_randist.h>

#include "models/curvature.h"
#include "models/net.h"
#include "models/rng.h"

#include "check_util.h"

/* REL_TOL: power iteration stops once two Rayleigh quotients agree to 1e-4 (relative); the
 * error left is that change times r^2 / (1 - r^2) for the ratio r of the two largest
 * eigenvalues (0.77 at most here: 1.5 times it), so within 2e-4; the central differences
 * of a quadratic are exact but for rounding. 1e-3 is five times that; a wrong answer (the
 * dominant magnitude -8 for 3, a step of 2h for h) is off by 50% or more. */
#define REL_TOL 1e-3
#define DIM 4

/* The quadratic's gradient A w with A = R diag(d) R^T, R a rotation in the (0, 1) and
 * (2, 3) planes, so that no eigenvector is a coordinate axis. */
typedef struct quad {
  gsl_matrix *A;
} quad;

static int quad_grad(void *ctx, const gsl_vector *w, gsl_vector *g)
{
  const quad *q = ctx;
  return gsl_blas_dgemv(CblasNoTrans, 1.0, q->A, w, 0.0, g);
}

static quad quad_make(const double d[DIM])
{
  gsl_matrix *R = gsl_matrix_calloc(DIM, DIM), *D = gsl_matrix_calloc(DIM, DIM), *T = gsl_matrix_alloc(DIM, DIM);
  const double c = cos(0.7), s = sin(0.7);
  for (size_t k = 0; k < DIM; k += 2) {
    gsl_matrix_set(R, k, k, c);
    gsl_matrix_set(R, k, k + 1, -s);
    gsl_matrix_set(R, k + 1, k, s);
    gsl_matrix_set(R, k + 1, k + 1, c);
  }
  for (size_t k = 0; k < DIM; k++)
    gsl_matrix_set(D, k, k, d[k]);
  quad q = {gsl_matrix_alloc(DIM, DIM)};
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, R, D, 0.0, T);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, T, R, 0.0, q.A);
  gsl_matrix_free(R);
  gsl_matrix_free(D);
  gsl_matrix_free(T);
  return q;
}

static double quad_top(const double d[DIM])
{
  quad q = quad_make(d);
  gsl_vector *w = gsl_vector_alloc(DIM);
  for (size_t i = 0; i < DIM; i++)
    gsl_vector_set(w, i, 0.3 * (double)i - 0.5); /* anywhere: the Hessian of a quadratic is constant */
  double lambda = NAN;
  ck_assert_int_eq(curvature_top(quad_grad, &q, w, &lambda), 0);
  gsl_vector_free(w);
  gsl_matrix_free(q.A);
  return lambda;
}

START_TEST(test_curvature_quadratic)
{
  const double d[DIM] = {2.0, 5.0, -1.0, 0.5};
  ck_assert_double_eq_tol(quad_top(d), 5.0, REL_TOL * 5.0);
}
END_TEST

/* The dominant eigenvalue -8 is a saddle's: the largest is 3. */
START_TEST(test_curvature_negative_dominant)
{
  const double d[DIM] = {-8.0, 3.0, 0.5, 1.0};
  ck_assert_double_eq_tol(quad_top(d), 3.0, REL_TOL * 3.0);
}
END_TEST

/* A linear model with squared loss (pred - y)^2 / 2: its mean loss over n rows has Hessian
 * [X 1]^T [X 1] / n whatever the parameters and labels. The rows have spread (i + 1)^-1 per
 * input, and the gradient is summed over batches of 7 rows (100 rows: a partial last one). */
START_TEST(test_curvature_linear_model)
{
  const size_t rows = 100, sizes[2] = {DIM, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_MSE);
  gsl_rng *r = rng_create(7, 0, 0);
  gsl_matrix *X = gsl_matrix_alloc(rows, DIM), *Z = gsl_matrix_alloc(rows, DIM + 1);
  double y[100];
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < DIM; j++) {
      double x = gsl_ran_gaussian(r, 1.0 / (double)(j + 1)) + (j == 0 ? 1.0 : 0.0);
      gsl_matrix_set(X, i, j, x);
      gsl_matrix_set(Z, i, j, x);
    }
    gsl_matrix_set(Z, i, DIM, 1.0);
    y[i] = gsl_ran_gaussian(r, 1.0);
  }
  gsl_matrix *H = gsl_matrix_alloc(DIM + 1, DIM + 1);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0 / (double)rows, Z, Z, 0.0, H);
  gsl_vector *eval = gsl_vector_alloc(DIM + 1);
  gsl_eigen_symm_workspace *ew = gsl_eigen_symm_alloc(DIM + 1);
  gsl_eigen_symm(H, eval, ew);
  double want = gsl_vector_max(eval), got = NAN;
  gsl_vector *w = gsl_vector_calloc(net_n_params(n));
  net_ws *ws = net_ws_create(n, 7);
  ck_assert_int_eq(curvature_net_top(n, w, X, y, 7, ws, &got), 0);
  ck_assert_double_eq_tol(got, want, REL_TOL * want);
  ck_assert_int_eq(curvature_net_top(n, w, X, y, 0, ws, &got), -1); /* no batch */
  net_ws_free(ws);
  gsl_vector_free(w);
  gsl_eigen_symm_free(ew);
  gsl_vector_free(eval);
  gsl_matrix_free(H);
  gsl_matrix_free(Z);
  gsl_matrix_free(X);
  gsl_rng_free(r);
  net_free(n);
}
END_TEST

/* |x_t| of x_{t+1} = x_t - a x_{t - tau} after `steps` steps from x = 1 for t <= 0. */
static double delayed_run(double a, long tau, long steps)
{
  double hist[64];
  for (long k = 0; k <= tau; k++)
    hist[k] = 1.0;
  for (long t = 0; t < steps; t++) {
    double next = hist[t % (tau + 1)] - a * hist[(t + 1) % (tau + 1)]; /* x_t and x_{t - tau} */
    hist[(t + 1) % (tau + 1)] = next;
  }
  return fabs(hist[steps % (tau + 1)]);
}

/* Stale gradient descent decays 5% below the bound and grows 5% above it (tau = 0: the
 * rate 2 / lambda of plain gradient descent). 20,000 steps: the slowest mode's modulus is
 * within about 1e-3 of 1 at 5% from the edge, so it has moved by e^20 either way. */
START_TEST(test_curvature_delay_bound)
{
  ck_assert_double_eq_tol(curvature_delay_bound(0), 2.0, 1e-15);
  const long taus[3] = {1, 5, 20};
  for (int i = 0; i < 3; i++) {
    double a = curvature_delay_bound(taus[i]);
    ck_assert_double_lt(delayed_run(0.95 * a, taus[i], 20000), 1e-3);
    ck_assert_double_gt(delayed_run(1.05 * a, taus[i], 20000), 1e3);
  }
}
END_TEST

Suite *curvature_suite(void)
{
  Suite *s = suite_create("curvature");
  ADD_TCASE(s, "top", test_curvature_quadratic, test_curvature_negative_dominant, test_curvature_linear_model,
            test_curvature_delay_bound);
  return s;
}

CHECK_MAIN(curvature_suite)

/* check_lbfgs_net.c - Check suite for models/lbfgs's full-batch L-BFGS of a net: logistic
 * and softmax regression against GSL's BFGS (within the distance the Hessian bounds), the
 * loss summed in portions against at once, the shapes it accepts, and determinism.
 * check_lbfgs.c holds the optimizer's own tests.
 *
 * References: Nocedal & Wright, Numerical Optimization, 2nd ed. (2006), "N&W". */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort_vector.h>

#include "models/lbfgs.h"
#include "models/rng.h"

#include "check_util.h"

/* Tolerances, each with where it comes from (the tests' comments give the measurements). */
/* LAMBDA_FLOOR: the smallest eigenvalues off the null space measure 0.0188 (logistic) and
 * 0.0076 (softmax), the null space's are below 2e-12: the distance bound needs one above. */
#define LAMBDA_FLOOR 1e-3
/* HESSIAN_SLACK: the distance bound (||g|| + ||g_gsl||) / lambda_min holds for a constant
 * Hessian; a factor 2 allows for it changing between the two points. */
#define HESSIAN_SLACK 2
/* TOL_PORTIONS: 400 rows summed in portions or at once, ~1e-16 error per term: at most
 * 4e-14 on O(1) values; measured 1.2e-15 on f and 3e-16 on the gradient. */
#define TOL_PORTIONS 1e-14

/* 400 examples in 5 dimensions from data_synthetic_gaussian with class separation 1:
 * overlapping classes, so the logistic and softmax losses have a finite minimum. */
static dataset *overlapping_data(size_t n_classes)
{
  gsl_rng *r = rng_create(42, RNG_ROLE_DATA, 0);
  dataset *d = data_synthetic_gaussian(400, 5, n_classes, 1.0, r);
  gsl_rng_free(r);
  return d;
}

static double gsl_f(const gsl_vector *x, void *params)
{
  double f;
  gsl_vector *g = gsl_vector_alloc(x->size);
  ck_assert_int_eq(lbfgs_net_fdf(params, x, &f, g), 0);
  gsl_vector_free(g);
  return f;
}

static void gsl_df(const gsl_vector *x, void *params, gsl_vector *g)
{
  double f;
  ck_assert_int_eq(lbfgs_net_fdf(params, x, &f, g), 0);
}

static void gsl_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
  ck_assert_int_eq(lbfgs_net_fdf(params, x, f, g), 0);
}

/* GSL's BFGS (vector_bfgs2, a Wolfe line search) from w = 0 until ||g|| <= gtol, with
 * the first step and line-search tolerance the GSL manual suggests (0.01, 0.1). The
 * minimizer into w, its gradient norm into *gnorm. */
static void gsl_bfgs2(lbfgs_net *ln, double gtol, gsl_vector *w, double *gnorm)
{
  gsl_multimin_function_fdf fn = {gsl_f, gsl_df, gsl_fdf, w->size, ln};
  gsl_multimin_fdfminimizer *s = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, w->size);
  gsl_vector_set_zero(w);
  gsl_multimin_fdfminimizer_set(s, &fn, w, 0.01, 0.1);
  int rc = GSL_CONTINUE;
  for (int it = 0; it < 1000 && rc == GSL_CONTINUE; it++) {
    ck_assert_int_eq(gsl_multimin_fdfminimizer_iterate(s), GSL_SUCCESS);
    rc = gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(s), gtol);
  }
  ck_assert_int_eq(rc, GSL_SUCCESS);
  gsl_vector_memcpy(w, gsl_multimin_fdfminimizer_x(s));
  *gnorm = gsl_blas_dnrm2(gsl_multimin_fdfminimizer_gradient(s));
  gsl_multimin_fdfminimizer_free(s);
}

/* The (n_null + 1)-th smallest eigenvalue of the Hessian at w, from central differences
 * of the exact gradient with h = 1e-5 (error ~h^2 ||f'''|| ~ 1e-10, far below the
 * eigenvalues of order 1e-2 it is used for), symmetrised. */
static double hessian_min_eig(lbfgs_net *ln, const gsl_vector *w, size_t n_null)
{
  const double h = 1e-5;
  size_t n = w->size;
  gsl_matrix *H = gsl_matrix_alloc(n, n);
  gsl_vector *x = gsl_vector_alloc(n), *gp = gsl_vector_alloc(n), *gm = gsl_vector_alloc(n);
  gsl_vector *ev = gsl_vector_alloc(n);
  double f;
  for (size_t j = 0; j < n; j++) {
    gsl_vector_memcpy(x, w);
    gsl_vector_set(x, j, gsl_vector_get(w, j) + h);
    lbfgs_net_fdf(ln, x, &f, gp);
    gsl_vector_set(x, j, gsl_vector_get(w, j) - h);
    lbfgs_net_fdf(ln, x, &f, gm);
    for (size_t i = 0; i < n; i++)
      gsl_matrix_set(H, i, j, (gsl_vector_get(gp, i) - gsl_vector_get(gm, i)) / (2 * h));
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      double v = 0.5 * (gsl_matrix_get(H, i, j) + gsl_matrix_get(H, j, i));
      gsl_matrix_set(H, i, j, v);
      gsl_matrix_set(H, j, i, v);
    }
  gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
  gsl_eigen_symm(H, ev, ws);
  gsl_sort_vector(ev);
  double lam = gsl_vector_get(ev, n_null);
  gsl_eigen_symm_free(ws);
  gsl_matrix_free(H);
  gsl_vector_free(x);
  gsl_vector_free(gp);
  gsl_vector_free(gm);
  gsl_vector_free(ev);
  return lam;
}

/* Full-batch L-BFGS from w = 0 against GSL's BFGS, both to ||g|| <= 1e-7, a decade above
 * where the losses' rounding (f ~ 0.4, ulp 5.6e-17) stops any line search on these sets:
 * ours near 2e-8, GSL's bfgs2 (no progress) near 5e-9 and 1.5e-8. Near the minimum,
 * ||w - w*|| <= ||g|| / lambda_min, so the two solutions are within
 * (||g_lbfgs|| + ||g_gsl||) / lambda_min; twice that allows for the Hessian changing
 * between the points. Softmax's loss does not change when one vector is added to every
 * class's (weights, bias), a null space of dimension inputs + 1 = 6; both methods move
 * only along gradients, which are orthogonal to it, so both stay in w = 0 + its
 * complement, and lambda_min is the smallest eigenvalue there. */
static void check_regression(size_t n_classes, net_loss loss, size_t n_out, size_t n_null)
{
  static const int ms[] = {1, 10};
  const double gtol = 1e-7;
  dataset *d = overlapping_data(n_classes);
  size_t sizes[] = {5, n_out};
  net *m = net_create(2, sizes, NET_ACT_IDENTITY, loss);
  lbfgs_net *ln = lbfgs_net_create(m, d, 0);
  size_t n = net_n_params(m);
  gsl_vector *ref = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
  double ref_gnorm;
  gsl_bfgs2(ln, gtol, ref, &ref_gnorm);
  double lam = hessian_min_eig(ln, ref, n_null);
  ck_assert_double_gt(lam, LAMBDA_FLOOR);
  for (size_t i = 0; i < 2; i++) {
    lbfgs_params p;
    lbfgs_params_default(&p);
    p.m = ms[i];
    p.gtol = gtol;
    lbfgs_result r;
    gsl_vector_set_zero(w);
    ck_assert_int_eq(lbfgs_net_minimize(m, d, 0, &p, w, &r), LBFGS_CONVERGED);
    ck_assert_double_le(r.gnorm, gtol);
    gsl_vector_sub(w, ref);
    ck_assert_double_le(gsl_blas_dnrm2(w), HESSIAN_SLACK * (r.gnorm + ref_gnorm) / lam);
  }
  gsl_vector_free(ref);
  gsl_vector_free(w);
  lbfgs_net_free(ln);
  net_free(m);
  data_free(d);
}

/* lambda_min = 0.0188. Measured: m = 1 in 46 iterations, m = 10 in 16 (GSL bfgs2: 40);
 * distances to GSL's solution 2.8e-6 and 2.8e-7, bounds 9.8e-6 and 4.8e-6. */
START_TEST(test_lbfgs_logistic)
{
  check_regression(2, NET_LOSS_LOGISTIC, 1, 0);
}
END_TEST

/* Six Hessian eigenvalues below 2e-12 (the null space), then lambda_min = 0.0076.
 * Measured: m = 1 in 95 iterations, m = 10 in 29 (GSL bfgs2: 75); distances to GSL's
 * solution 4.6e-6 and 1.8e-6, bounds 4.1e-5 and 3.2e-5. */
START_TEST(test_lbfgs_softmax)
{
  check_regression(3, NET_LOSS_SOFTMAX, 3, 6);
}
END_TEST

/* Glorot-uniform parameters of m from seed 3, plus N(0, 0.3^2) on every entry so that
 * biases are not 0. Caller frees. */
static gsl_vector *some_params(const net *m)
{
  gsl_rng *r = rng_create(3, RNG_ROLE_INIT, 0);
  gsl_vector *w = gsl_vector_alloc(net_n_params(m));
  net_init_params(m, r, w);
  for (size_t i = 0; i < w->size; i++)
    gsl_vector_set(w, i, gsl_vector_get(w, i) + gsl_ran_gaussian(r, 0.3));
  gsl_rng_free(r);
  return w;
}

/* Portions change only the summation order: portions of 1 and 7 rows (7 does not divide
 * 400) agree with one portion of 400 to rounding (measured <= 1.2e-15 on f and 3e-16
 * on the gradient, allowed TOL_PORTIONS: 400 terms of ~1e-16 error each), and one portion, asked
 * for as 0, 400 or more, gives net_loss_grad's own bits. */
START_TEST(test_lbfgs_net_portions)
{
  static const size_t sizes[] = {5, 3}, portions[] = {1, 7};
  dataset *d = overlapping_data(3);
  net *m = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  size_t n = net_n_params(m);
  gsl_vector *w = some_params(m), *g = gsl_vector_alloc(n), *ref = gsl_vector_alloc(n);
  net_ws *ws = net_ws_create(m, data_n(d));
  double f, fref;
  ck_assert_int_eq(net_loss_grad(m, w, d->X, d->y, ws, &fref, ref), 0);
  static const size_t whole[] = {0, 400, 1000};
  for (size_t i = 0; i < 3; i++) {
    lbfgs_net *ln = lbfgs_net_create(m, d, whole[i]);
    ck_assert_int_eq(lbfgs_net_fdf(ln, w, &f, g), 0);
    ck_assert_int_eq(memcmp(&f, &fref, sizeof f), 0);
    ck_assert_int_eq(memcmp(g->data, ref->data, n * sizeof(double)), 0);
    lbfgs_net_free(ln);
  }
  for (size_t i = 0; i < 2; i++) {
    lbfgs_net *ln = lbfgs_net_create(m, d, portions[i]);
    ck_assert_int_eq(lbfgs_net_fdf(ln, w, &f, g), 0);
    ck_assert_double_eq_tol(f, fref, TOL_PORTIONS);
    for (size_t j = 0; j < n; j++)
      ck_assert_double_eq_tol(gsl_vector_get(g, j), gsl_vector_get(ref, j), TOL_PORTIONS);
    lbfgs_net_free(ln);
  }
  net_ws_free(ws);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_vector_free(ref);
  net_free(m);
  data_free(d);
}
END_TEST

START_TEST(test_lbfgs_net_shapes)
{
  static const size_t sizes[] = {4, 3};
  dataset *d = overlapping_data(3); /* 5 inputs */
  net *m = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  lbfgs_params p;
  lbfgs_params_default(&p);
  lbfgs_result r;
  gsl_vector *w = gsl_vector_calloc(net_n_params(m)), *g = gsl_vector_alloc(net_n_params(m));
  ck_assert_ptr_null(lbfgs_net_create(m, d, 0));
  ck_assert_int_eq(lbfgs_net_minimize(m, d, 0, &p, w, &r), LBFGS_ERR_PARAMS);
  static const size_t five[] = {5, 3};
  net *m5 = net_create(2, five, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  lbfgs_net *ln = lbfgs_net_create(m5, d, 0);
  double f;
  ck_assert_int_eq(lbfgs_net_fdf(ln, w, &f, g), -1); /* 15 parameters, m5 has 18 */
  ck_assert_int_eq(lbfgs_net_minimize(m5, d, 0, &p, w, &r), LBFGS_ERR_PARAMS);
  lbfgs_net_free(ln);
  gsl_vector_free(w);
  gsl_vector_free(g);
  net_free(m);
  net_free(m5);
  data_free(d);
}
END_TEST

/* Two runs of softmax regression (portions of 7 rows, m = 5), step by step, give
 * bit-identical iterates, values and counters at every step. */
START_TEST(test_lbfgs_determinism)
{
  static const size_t sizes[] = {5, 3};
  dataset *d = overlapping_data(3);
  net *m = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  size_t n = net_n_params(m);
  lbfgs_params p;
  lbfgs_params_default(&p);
  p.m = 5;
  p.gtol = 1e-7;
  lbfgs_net *ln[2];
  lbfgs_local *lo[2];
  lbfgs_state *st[2];
  gsl_vector *w0 = some_params(m);
  for (int i = 0; i < 2; i++) {
    ln[i] = lbfgs_net_create(m, d, 7);
    lo[i] = lbfgs_local_create(n, p.m, lbfgs_net_fdf, ln[i]);
    gsl_vector_memcpy(lbfgs_local_slot(lo[i], LBFGS_SLOT_X), w0);
    st[i] = lbfgs_create(lbfgs_local_ops(), lo[i], &p);
  }
  lbfgs_status s0, s1;
  long steps = 0;
  do {
    s0 = lbfgs_step(st[0]);
    s1 = lbfgs_step(st[1]);
    ck_assert_int_eq(s0, s1);
    lbfgs_result r0, r1;
    lbfgs_get_result(st[0], &r0);
    lbfgs_get_result(st[1], &r1);
    ck_assert_int_eq(r0.iterations, r1.iterations);
    ck_assert_int_eq(r0.evaluations, r1.evaluations);
    ck_assert_int_eq(r0.n_pairs, r1.n_pairs);
    ck_assert_int_eq(r0.skipped, r1.skipped);
    ck_assert_int_eq(memcmp(&r0.f, &r1.f, sizeof r0.f), 0);
    ck_assert_int_eq(memcmp(&r0.gnorm, &r1.gnorm, sizeof r0.gnorm), 0);
    ck_assert_int_eq(memcmp(&r0.step, &r1.step, sizeof r0.step), 0);
    ck_assert_int_eq(memcmp(&r0.total, &r1.total, sizeof r0.total), 0);
    ck_assert_int_eq(memcmp(lbfgs_local_slot(lo[0], LBFGS_SLOT_X)->data, lbfgs_local_slot(lo[1], LBFGS_SLOT_X)->data,
                            n * sizeof(double)),
                     0);
    steps++;
  } while (s0 == LBFGS_RUNNING);
  ck_assert_int_eq(s0, LBFGS_CONVERGED);
  ck_assert_int_gt(steps, 10);
  for (int i = 0; i < 2; i++) {
    lbfgs_free(st[i]);
    lbfgs_local_free(lo[i]);
    lbfgs_net_free(ln[i]);
  }
  gsl_vector_free(w0);
  net_free(m);
  data_free(d);
}
END_TEST

static Suite *lbfgs_net_suite(void)
{
  Suite *s = suite_create("lbfgs_net");
  ADD_TCASE(s, "minimum", test_lbfgs_logistic, test_lbfgs_softmax);
  ADD_TCASE(s, "net", test_lbfgs_net_portions, test_lbfgs_net_shapes);
  ADD_TCASE(s, "determinism", test_lbfgs_determinism);
  return s;
}

CHECK_MAIN(lbfgs_net_suite)

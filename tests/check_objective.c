/* check_objective.c - Check suite for models/objective: values, subgradients (central
 * differences, the subgradient inequality, the choice at kinks) and the synthetic
 * generator. The exact reference solver is check_objective_reference.c's. */

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_randist.h>

#include "models/objective.h"
#include "models/rng.h"

#include "check_util.h"
#include "objective_util.h"

/* Tolerances, each with where it comes from (u = 2^-53 ~ 1.1e-16). */
/* TOL_FD_REL: a quadratic's central difference has no truncation error; rounding is
 * u |f| / h ~ 1e-9 for values ~1e2 and h = 1e-5; 1e-7 leaves a margin. */
#define TOL_FD_REL 1e-7
/* TOL_SUBGRAD_REL: f(x), f(y) and g.(y - x) over 9 rows of dim 3 each round by ~12 u of
 * their magnitude ~ 1.3e-15; 1e-12 leaves a margin. */
#define TOL_SUBGRAD_REL 1e-12
/* TOL_REPLAY_REL: the same rows summed by objective_synthetic's objective and by one made
 * here from the replayed draws (the same code: equal in practice). */
#define TOL_REPLAY_REL 1e-12

/* ---- helpers ---- */

static double value_of(const objective *f, const gsl_vector *x)
{
  double v;
  ck_assert_int_eq(objective_value(f, x, &v), 0);
  return v;
}

/* ---- create ---- */

START_TEST(test_objective_create)
{
  static const double a[6] = {1, 0, 0, 1, 1, 1}, b[3] = {1, -1, 1}, half[3] = {1, 0.5, -1};
  gsl_matrix *A = matrix_of(3, 2, a);
  gsl_vector *y = vector_of(3, b), *yh = vector_of(3, half), *y2 = vector_of(2, b);
  objective *f = objective_create(OBJECTIVE_HINGE, A, y, 0.25);
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(objective_dim(f), 2);
  ck_assert_uint_eq(objective_rows(f), 3);
  ck_assert_int_eq(objective_get_kind(f), OBJECTIVE_HINGE);
  ck_assert_double_eq(objective_reg(f), 0.25);
  gsl_matrix_set(A, 0, 0, 100.0); /* the objective holds its own copy */
  gsl_vector *x = gsl_vector_calloc(2);
  ck_assert_double_eq(value_of(f, x), 3.0);
  objective_free(f);
  objective_free(NULL);
  ck_assert_ptr_null(objective_create(OBJECTIVE_HINGE, A, yh, 0.0)); /* label 0.5 */
  ck_assert_ptr_null(objective_create(OBJECTIVE_L1, A, y2, 0.0));    /* 3 rows, 2 targets */
  ck_assert_ptr_null(objective_create(OBJECTIVE_L1, A, y, -1.0));
  ck_assert_ptr_null(objective_create(OBJECTIVE_L1, A, y, NAN));
  ck_assert_ptr_null(objective_create((objective_kind)7, A, y, 0.0));
  gsl_matrix_set(A, 2, 1, INFINITY);
  ck_assert_ptr_null(objective_create(OBJECTIVE_LEAST_SQUARES, A, y, 0.0));
  gsl_matrix_free(A);
  gsl_vector_free(y);
  gsl_vector_free(yh);
  gsl_vector_free(y2);
  gsl_vector_free(x);
}
END_TEST

START_TEST(test_objective_kind_names)
{
  static const char *names[] = {"least-squares", "l1", "hinge"};
  objective_kind k;
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(objective_kind_parse(names[i], &k), 0);
    ck_assert_int_eq(k, i);
    ck_assert_str_eq(objective_kind_name(k), names[i]);
  }
  ck_assert_int_eq(objective_kind_parse("L1", &k), -1);
}
END_TEST

START_TEST(test_objective_bad_kind_name_aborts)
{
  objective_kind_name((objective_kind)3);
}
END_TEST

/* ---- values ---- */

/* A = [1 0; 0 1; 1 1], b = [1 2 4] (labels [1 -1 1] for hinge), by hand:
 * least squares at 0: (1 + 4 + 16)/2 = 10.5; L1 at (1, 1): |0| + |-1| + |-2| = 3;
 * hinge at (1, 1): margins 1, -1, 2 give 0 + 2 + 0 = 2, plus reg/2 ||x||^2 = 0.25 * 2. */
START_TEST(test_objective_value_known)
{
  static const double a[6] = {1, 0, 0, 1, 1, 1}, b[3] = {1, 2, 4}, lab[3] = {1, -1, 1}, one[2] = {1, 1};
  gsl_matrix *A = matrix_of(3, 2, a);
  gsl_vector *y = vector_of(3, b), *l = vector_of(3, lab), *x0 = gsl_vector_calloc(2), *x1 = vector_of(2, one);
  objective *ls = objective_create(OBJECTIVE_LEAST_SQUARES, A, y, 0.0);
  objective *l1 = objective_create(OBJECTIVE_L1, A, y, 0.0);
  objective *hi = objective_create(OBJECTIVE_HINGE, A, l, 0.5);
  ck_assert_double_eq(value_of(ls, x0), 10.5);
  ck_assert_double_eq(value_of(l1, x1), 3.0);
  ck_assert_double_eq(value_of(hi, x1), 2.5);
  gsl_vector *bad = gsl_vector_alloc(3);
  double v;
  ck_assert_int_eq(objective_value(ls, bad, &v), -1);
  ck_assert_int_eq(objective_subgrad(ls, bad, x0), -1);
  ck_assert_int_eq(objective_subgrad(ls, x0, bad), -1);
  objective *both[] = {ls, l1};
  ck_assert_int_eq(objective_sum_value(2, both, x1, &v), 0);
  ck_assert_double_eq(v, value_of(ls, x1) + 3.0);
  ck_assert_int_eq(objective_sum_value(2, both, bad, &v), -1);
  objective_free(ls);
  objective_free(l1);
  objective_free(hi);
  gsl_matrix_free(A);
  gsl_vector_free(y);
  gsl_vector_free(l);
  gsl_vector_free(x0);
  gsl_vector_free(x1);
  gsl_vector_free(bad);
}
END_TEST

/* ---- subgradients ---- */

/* Least squares with ridge: gradient against central differences, h = 1e-5; the
 * truncation error of a quadratic's central difference is 0, so TOL_FD_REL is
 * rounding only (values ~ 1e2 divided by 2h). */
START_TEST(test_objective_ls_gradient)
{
  gsl_rng *r = rng_create(1, RNG_ROLE_DATA, 0);
  problem p = random_problem(OBJECTIVE_L1, 1, 12, 5, 0.7, r);
  objective *f = objective_create(OBJECTIVE_LEAST_SQUARES, p.A, p.b, 0.7);
  gsl_vector *x = gsl_vector_alloc(5), *g = gsl_vector_alloc(5), *xp = gsl_vector_alloc(5);
  for (int trial = 0; trial < 10; trial++) {
    for (size_t k = 0; k < 5; k++)
      gsl_vector_set(x, k, gsl_ran_gaussian(r, 2.0));
    ck_assert_int_eq(objective_subgrad(f, x, g), 0);
    for (size_t k = 0; k < 5; k++) {
      const double h = 1e-5;
      gsl_vector_memcpy(xp, x);
      gsl_vector_set(xp, k, gsl_vector_get(x, k) + h);
      double fp = value_of(f, xp);
      gsl_vector_set(xp, k, gsl_vector_get(x, k) - h);
      double fm = value_of(f, xp), fd = (fp - fm) / (2 * h);
      ck_assert_double_eq_tol(gsl_vector_get(g, k), fd, TOL_FD_REL * (1.0 + fabs(fd)));
    }
  }
  objective_free(f);
  problem_free(&p);
  gsl_vector_free(x);
  gsl_vector_free(g);
  gsl_vector_free(xp);
  gsl_rng_free(r);
}
END_TEST

/* f(y) >= f(x) + g.(y - x) for every kind, at random x and at x on kinks. Integer data
 * and x make a.x - b exactly 0 on chosen rows, so the kinks are really hit. */
START_TEST(test_objective_subgradient_inequality)
{
  gsl_rng *r = rng_create(2, RNG_ROLE_DATA, 0);
  enum { N = 9, D = 3 };
  gsl_matrix *A = gsl_matrix_alloc(N, D);
  gsl_vector *b = gsl_vector_alloc(N), *lab = gsl_vector_alloc(N), *x = gsl_vector_alloc(D);
  gsl_vector *y = gsl_vector_alloc(D), *g = gsl_vector_alloc(D), *d = gsl_vector_alloc(D);
  for (size_t k = 0; k < D; k++)
    gsl_vector_set(x, k, (double)((int)gsl_rng_uniform_int(r, 5) - 2));
  for (size_t j = 0; j < N; j++) {
    double z = 0.0;
    for (size_t k = 0; k < D; k++) {
      gsl_matrix_set(A, j, k, (double)((int)gsl_rng_uniform_int(r, 7) - 3));
      z += gsl_matrix_get(A, j, k) * gsl_vector_get(x, k);
    }
    gsl_vector_set(b, j, j % 3 == 0 ? z : z + 1.5);        /* rows 0, 3, 6 at the L1 kink */
    gsl_vector_set(lab, j, z == 1.0 || j % 2 ? 1.0 : -1.0); /* some hinge margins exactly 1 */
  }
  objective *fs[3] = {objective_create(OBJECTIVE_LEAST_SQUARES, A, b, 0.3),
                      objective_create(OBJECTIVE_L1, A, b, 0.0), objective_create(OBJECTIVE_HINGE, A, lab, 0.2)};
  for (int kind = 0; kind < 3; kind++)
    for (int trial = 0; trial < 200; trial++) {
      gsl_vector *at = x;
      if (trial % 2) { /* odd trials: a random point instead of the kink point */
        at = d;
        for (size_t k = 0; k < D; k++)
          gsl_vector_set(d, k, gsl_ran_gaussian(r, 2.0));
      }
      ck_assert_int_eq(objective_subgrad(fs[kind], at, g), 0);
      for (size_t k = 0; k < D; k++)
        gsl_vector_set(y, k, gsl_vector_get(at, k) + gsl_ran_gaussian(r, trial % 4 < 2 ? 1e-3 : 3.0));
      double fx = value_of(fs[kind], at), fy = value_of(fs[kind], y), lin = fx;
      for (size_t k = 0; k < D; k++)
        lin += gsl_vector_get(g, k) * (gsl_vector_get(y, k) - gsl_vector_get(at, k));
      ck_assert_msg(fy >= lin - TOL_SUBGRAD_REL * (1.0 + fabs(fx) + fabs(fy)), "%s: f(y) = %.17g < %.17g",
                    objective_kind_name((objective_kind)kind), fy, lin);
    }
  free_all(3, fs);
  gsl_matrix_free(A);
  gsl_vector_free(b);
  gsl_vector_free(lab);
  gsl_vector_free(x);
  gsl_vector_free(y);
  gsl_vector_free(g);
  gsl_vector_free(d);
  gsl_rng_free(r);
}
END_TEST

/* The documented element at a kink: a row with a.x = b adds nothing to the L1
 * subgradient (sign(0) = 0), and a hinge row with margin exactly 1 adds nothing. */
START_TEST(test_objective_kink_choice)
{
  static const double a[4] = {1, 2, 3, -1}, x1[2] = {1, 1};
  static const double b_l1[2] = {3, 0}, lab[2] = {1, -1}; /* row 0: 1 + 2 = 3 */
  gsl_matrix *A = matrix_of(2, 2, a);
  gsl_vector *x = vector_of(2, x1), *g = gsl_vector_alloc(2);
  gsl_vector *bl = vector_of(2, b_l1), *bh = vector_of(2, lab);
  objective *l1 = objective_create(OBJECTIVE_L1, A, bl, 0.0);
  objective_subgrad(l1, x, g); /* row 0 at its kink, row 1: 3 - 1 - 0 = 2 > 0 */
  ck_assert_double_eq(gsl_vector_get(g, 0), 3.0);
  ck_assert_double_eq(gsl_vector_get(g, 1), -1.0);
  gsl_matrix_set(A, 1, 0, 0.0); /* row 1: a = (0, -1), label -1: margin 1, kink */
  gsl_matrix_set(A, 0, 1, 0.0); /* row 0: a = (1, 0), label 1: margin 1, kink */
  objective *hi = objective_create(OBJECTIVE_HINGE, A, bh, 0.0);
  objective_subgrad(hi, x, g);
  ck_assert_double_eq(gsl_vector_get(g, 0), 0.0);
  ck_assert_double_eq(gsl_vector_get(g, 1), 0.0);
  ck_assert_double_eq(value_of(hi, x), 0.0);
  objective_free(l1);
  objective_free(hi);
  gsl_matrix_free(A);
  gsl_vector_free(x);
  gsl_vector_free(g);
  gsl_vector_free(bl);
  gsl_vector_free(bh);
}
END_TEST

/* ---- synthetic problems ---- */

/* Replays the documented draw order for least squares and compares values bit for
 * bit at random points: x_true first, then per agent and row the features and one
 * N(0, 0.1^2) noise draw; every agent has reg = lam / m. */
START_TEST(test_objective_synthetic_draws)
{
  enum { M = 3, D = 4, ROWS = 5 };
  gsl_rng *r = rng_create(8, RNG_ROLE_DATA, 0), *ref = rng_create(8, RNG_ROLE_DATA, 0);
  objective *fs[M];
  ck_assert_int_eq(objective_synthetic(OBJECTIVE_LEAST_SQUARES, M, D, ROWS, 0.6, r, fs), 0);
  double xt[D];
  for (size_t k = 0; k < D; k++)
    xt[k] = gsl_ran_gaussian(ref, 1.0);
  gsl_matrix *A = gsl_matrix_alloc(ROWS, D);
  gsl_vector *b = gsl_vector_alloc(ROWS), *x = gsl_vector_alloc(D);
  for (size_t i = 0; i < M; i++) {
    for (size_t j = 0; j < ROWS; j++) {
      double z = 0.0;
      for (size_t k = 0; k < D; k++) {
        gsl_matrix_set(A, j, k, gsl_ran_gaussian(ref, 1.0));
        z += gsl_matrix_get(A, j, k) * xt[k];
      }
      gsl_vector_set(b, j, z + gsl_ran_gaussian(ref, 0.1));
    }
    objective *mine = objective_create(OBJECTIVE_LEAST_SQUARES, A, b, 0.6 / M);
    ck_assert_double_eq(objective_reg(fs[i]), 0.6 / M);
    ck_assert_uint_eq(objective_rows(fs[i]), ROWS);
    ck_assert_uint_eq(objective_dim(fs[i]), D);
    for (int t = 0; t < 3; t++) {
      for (size_t k = 0; k < D; k++)
        gsl_vector_set(x, k, gsl_ran_gaussian(r, 1.0));
      ck_assert_double_eq_tol(value_of(fs[i], x), value_of(mine, x), TOL_REPLAY_REL * value_of(mine, x));
    }
    objective_free(mine);
  }
  free_all(M, fs);
  gsl_matrix_free(A);
  gsl_vector_free(b);
  gsl_vector_free(x);
  gsl_rng_free(r);
  gsl_rng_free(ref);
}
END_TEST

/* Same seed, same problem; another seed, another; hinge labels are +-1 (create would
 * refuse anything else, and the generator goes through the same type); sizes and
 * lam are validated. The reference solves every kind of synthetic problem exactly. */
START_TEST(test_objective_synthetic_kinds)
{
  gsl_rng *a = rng_create(9, RNG_ROLE_DATA, 0), *b = rng_create(9, RNG_ROLE_DATA, 0);
  gsl_rng *c = rng_create(10, RNG_ROLE_DATA, 0);
  gsl_vector *x = gsl_vector_alloc(5), *xs = gsl_vector_alloc(5);
  gsl_vector_set_all(x, 0.3);
  for (int kind = 0; kind < 3; kind++) {
    objective *fa[4], *fb[4], *fc[4];
    ck_assert_int_eq(objective_synthetic((objective_kind)kind, 4, 5, 12, 0.4, a, fa), 0);
    ck_assert_int_eq(objective_synthetic((objective_kind)kind, 4, 5, 12, 0.4, b, fb), 0);
    ck_assert_int_eq(objective_synthetic((objective_kind)kind, 4, 5, 12, 0.4, c, fc), 0);
    double va = sum_of(4, fa, x), vb = sum_of(4, fb, x), vc = sum_of(4, fc, x), fstar;
    ck_assert_mem_eq(&va, &vb, sizeof va);
    ck_assert_double_ne(va, vc);
    ck_assert_int_eq(objective_get_kind(fa[0]), kind);
    ck_assert_int_eq(objective_reference(4, fa, xs, &fstar), OBJECTIVE_EXACT);
    ck_assert_double_le(fstar, sum_of(4, fa, x));
    free_all(4, fa);
    free_all(4, fb);
    free_all(4, fc);
  }
  objective *out[2] = {NULL, NULL};
  ck_assert_int_eq(objective_synthetic(OBJECTIVE_L1, 0, 5, 12, 0.0, a, out), -1);
  ck_assert_int_eq(objective_synthetic(OBJECTIVE_L1, 2, 0, 12, 0.0, a, out), -1);
  ck_assert_int_eq(objective_synthetic(OBJECTIVE_L1, 2, 5, 0, 0.0, a, out), -1);
  ck_assert_int_eq(objective_synthetic(OBJECTIVE_L1, 2, 5, 12, -1.0, a, out), -1);
  ck_assert_ptr_null(out[0]);
  gsl_vector_free(x);
  gsl_vector_free(xs);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
}
END_TEST

Suite *objective_suite(void)
{
  Suite *s = suite_create("objective");
  ADD_TCASE(s, "create", test_objective_create, test_objective_kind_names);
  ADD_TCASE(s, "value", test_objective_value_known);
  ADD_TCASE(s, "subgradient", test_objective_ls_gradient, test_objective_subgradient_inequality,
            test_objective_kink_choice);
  ADD_TCASE(s, "synthetic", test_objective_synthetic_draws, test_objective_synthetic_kinds);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_objective_bad_kind_name_aborts, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(objective_suite)

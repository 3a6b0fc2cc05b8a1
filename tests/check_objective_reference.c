/* check_objective_reference.c - Check suite for models/objective's exact reference solver:
 * least squares (known answers, recovery from noise-free data, what it refuses), L1 and
 * hinge (known answers, brute force in 1-D and 2-D, optimality conditions and
 * perturbations in higher dimension, the smoothed solve) and its determinism. Values,
 * subgradients and the generator are check_objective.c's; the problems both build,
 * objective_util.h's. */

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
/* Tolerances, each with where it comes from (u = 2^-53 ~ 1.1e-16). */
/* TOL_NO_DESCENT_REL: F, a sum of <= 60 non-negative rows of dim <= 8, rounds by
 * ~(60 + 8) u F ~ 7.5e-15 F; the smallest step, 1e-7, raises F by ~1e-7 at a minimum. */
#define TOL_NO_DESCENT_REL 1e-13
/* TOL_KNOWN: hand answers (4/3, 9/8, 2.8125, ...) of small-integer problems solved with
 * condition numbers <= 3: rounding ~ cond x a few u x |x| < 5e-15; 1e-14 leaves a margin. */
#define TOL_KNOWN 1e-14
/* TOL_RECOVER: x* = x0 from noise-free data, A 30 x 6 Gaussian with condition ~3:
 * backward-stable least squares errs by ~cond u |x| ~ 1e-15; 1e-13 is generous. */
#define TOL_RECOVER 1e-13
/* TOL_ZERO_F: f* = 1/2 ||Ax - b||^2 with residual entries ~ a few u |b| ~ 1e-15 over 30
 * rows is ~1e-29; 1e-25 leaves a margin. */
#define TOL_ZERO_F 1e-25
/* TOL_ZERO_GRAD: A'(Ax - b) + lam x at the solution: each entry sums 30 products of
 * size ~3, rounding at most ~30 u 90 ~ 3e-13. */
#define TOL_ZERO_GRAD 1e-12
/* DET_PARALLEL: kink lines of Gaussian rows this close to parallel (|det| ~ 1 typically)
 * have no vertex to try. */
#define DET_PARALLEL 1e-12
/* TOL_BRUTE_REL: F over 40 rows at one minimiser found two ways (the reference's solve, the
 * brute force's vertex or stationary point): ~40 u F from the sums plus the points'
 * rounding times slopes <= 40, ~1e-14. */
#define TOL_BRUTE_REL 1e-12
/* TOL_KKT: rows within it (relative) count as at their kink, and the multipliers and the
 * residual must meet the conditions within it: the reference's solves round at ~1e-13
 * on these well-conditioned problems, while a row off its kink sits ~1e-2 away. */
#define TOL_KKT 1e-9
/* TOL_SMOOTHED: F* = 0, and the smoothed minimiser is within N mu = 4 x 1e-12 x (largest
 * initial residual, a few) ~ 1e-11 of it (objective.h), plus Newton's stopping error. */
#define TOL_SMOOTHED 1e-9

/* The kink form used by the checks below, derived here independently of the module:
 * L1 row j is |a_j.x - b_j|, hinge row j is max(0, 1 - b_j a_j.x) = h(t) with
 * t = b_j a_j.x - 1; the term's slope in t is lo left of 0 and hi right of it. */
static void kink_row(const problem *p, size_t j, const gsl_vector *x, double *t, double *lo, double *hi,
                     double *sign_a)
{
  double z = 0.0, b = gsl_vector_get(p->b, j);
  for (size_t k = 0; k < x->size; k++)
    z += gsl_matrix_get(p->A, j, k) * gsl_vector_get(x, k);
  if (p->kind == OBJECTIVE_L1) {
    *t = z - b, *lo = -1.0, *hi = 1.0, *sign_a = 1.0;
  } else {
    *t = b * z - 1.0, *lo = -1.0, *hi = 0.0, *sign_a = b;
  }
}

/* Optimality of x for a nonsmooth problem, checked from the definitions: with
 * Z = rows within tol of their kink, the multipliers u minimising
 * || lam x + sum_{j not in Z} h'(t_j) a~_j + sum_{j in Z} u_j a~_j || (least squares,
 * GSL) must lie in [lo, hi] up to tol and leave a residual <= tol * scale.
 * Returns the residual norm, and the worst interval violation in *viol. */
static double kkt_residual(const problem *p, const gsl_vector *x, double tol, double *viol)
{
  size_t N = p->A->size1, dim = x->size, nz = 0;
  size_t *Z = malloc(N * sizeof *Z);
  gsl_vector *g = gsl_vector_alloc(dim);
  gsl_vector_memcpy(g, x);
  gsl_vector_scale(g, p->lam);
  double lo = 0, hi = 0;
  for (size_t j = 0; j < N; j++) {
    double t, s;
    kink_row(p, j, x, &t, &lo, &hi, &s);
    gsl_vector_const_view a = gsl_matrix_const_row(p->A, j);
    if (fabs(t) <= tol * (1.0 + gsl_blas_dnrm2(&a.vector) * gsl_blas_dnrm2(x)))
      Z[nz++] = j;
    else
      gsl_blas_daxpy((t < 0 ? lo : hi) * s, &a.vector, g);
  }
  *viol = 0.0;
  double res = gsl_blas_dnrm2(g);
  if (nz > 0 && nz <= dim) {
    gsl_matrix *AZt = gsl_matrix_alloc(dim, nz), *cov = gsl_matrix_alloc(nz, nz);
    gsl_vector *u = gsl_vector_alloc(nz), *neg = gsl_vector_alloc(dim);
    for (size_t z = 0; z < nz; z++) {
      double t, s;
      kink_row(p, Z[z], x, &t, &lo, &hi, &s);
      for (size_t k = 0; k < dim; k++)
        gsl_matrix_set(AZt, k, z, s * gsl_matrix_get(p->A, Z[z], k));
    }
    gsl_vector_memcpy(neg, g);
    gsl_vector_scale(neg, -1.0);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(dim, nz);
    double chisq;
    gsl_multifit_linear(AZt, neg, u, cov, &chisq, w);
    res = sqrt(chisq);
    for (size_t z = 0; z < nz; z++) {
      double uz = gsl_vector_get(u, z);
      *viol = fmax(*viol, fmax(lo - uz, uz - hi));
    }
    gsl_multifit_linear_free(w);
    gsl_matrix_free(AZt);
    gsl_matrix_free(cov);
    gsl_vector_free(u);
    gsl_vector_free(neg);
  } else if (nz > dim) {
    res = INFINITY; /* more rows at a kink than unknowns: not expected on random data */
  }
  free(Z);
  gsl_vector_free(g);
  return res;
}

/* F(x + h v) >= F(x) for n_dir random unit directions and steps 1e-1 .. 1e-7: the
 * definition of a minimiser, up to rounding of F (TOL_NO_DESCENT_REL). */
static void assert_no_descent(size_t m, objective *const *fs, const gsl_vector *x, gsl_rng *r, int n_dir)
{
  size_t dim = x->size;
  double F = sum_of(m, fs, x);
  gsl_vector *y = gsl_vector_alloc(dim), *v = gsl_vector_alloc(dim);
  for (int d = 0; d < n_dir; d++) {
    for (size_t k = 0; k < dim; k++)
      gsl_vector_set(v, k, gsl_ran_gaussian(r, 1.0));
    gsl_vector_scale(v, 1.0 / gsl_blas_dnrm2(v));
    for (double h = 1e-1; h >= 1e-7; h /= 100) {
      gsl_vector_memcpy(y, x);
      gsl_blas_daxpy(h, v, y);
      double Fy = sum_of(m, fs, y);
      ck_assert_msg(Fy >= F - TOL_NO_DESCENT_REL * (1.0 + fabs(F)), "F(x* + %g v) = %.17g < F(x*) = %.17g", h, Fy, F);
    }
  }
  gsl_vector_free(y);
  gsl_vector_free(v);
}

/* ---- reference: least squares ---- */

/* A = [1 0; 0 1; 1 1], b = [1 2 4], rows {0, 1} on agent 0 and {2} on agent 1.
 * Normal equations by hand: [2 1; 1 2] x = [5 6] gives x* = (4/3, 7/3), residual
 * (1/3, 1/3, -1/3), f* = 1/6. With lam = 1 (0.5 per agent): [3 1; 1 3] x = [5 6],
 * x* = (9/8, 13/8), f* = (b.b - b.A x*)/2 = (21 - 123/8)/2 = 2.8125. */
START_TEST(test_objective_ls_known)
{
  static const double a[6] = {1, 0, 0, 1, 1, 1}, b[3] = {1, 2, 4};
  static const double lams[2] = {0.0, 1.0}, want_x[2][2] = {{4. / 3, 7. / 3}, {9. / 8, 13. / 8}};
  static const double want_f[2] = {1. / 6, 2.8125};
  gsl_matrix *A = matrix_of(3, 2, a);
  gsl_vector *y = vector_of(3, b), *xs = gsl_vector_alloc(2);
  for (int c = 0; c < 2; c++) {
    gsl_matrix_const_view A0 = gsl_matrix_const_submatrix(A, 0, 0, 2, 2), A1 = gsl_matrix_const_submatrix(A, 2, 0, 1, 2);
    gsl_vector_const_view b0 = gsl_vector_const_subvector(y, 0, 2), b1 = gsl_vector_const_subvector(y, 2, 1);
    objective *fs[2] = {objective_create(OBJECTIVE_LEAST_SQUARES, &A0.matrix, &b0.vector, lams[c] / 2),
                        objective_create(OBJECTIVE_LEAST_SQUARES, &A1.matrix, &b1.vector, lams[c] / 2)};
    double fstar;
    ck_assert_int_eq(objective_reference(2, fs, xs, &fstar), OBJECTIVE_EXACT);
    for (size_t k = 0; k < 2; k++)
      ck_assert_double_eq_tol(gsl_vector_get(xs, k), want_x[c][k], TOL_KNOWN);
    ck_assert_double_eq_tol(fstar, want_f[c], TOL_KNOWN);
    free_all(2, fs);
  }
  gsl_matrix_free(A);
  gsl_vector_free(y);
  gsl_vector_free(xs);
}
END_TEST

/* Noise-free b = A x0 over 3 agents: x* = x0 and f* = 0 up to rounding (A is 30 x 6
 * Gaussian, condition number ~ 3, so TOL_RECOVER is generous); the gradient of sum f_i
 * vanishes at x* with ridge too. Fewer rows than unknowns: the minimum-norm
 * interpolant, f* = 0. */
START_TEST(test_objective_ls_recovers)
{
  gsl_rng *r = rng_create(3, RNG_ROLE_DATA, 0);
  problem p = random_problem(OBJECTIVE_L1, 3, 30, 6, 0.0, r);
  gsl_vector *x0 = gsl_vector_alloc(6), *xs = gsl_vector_alloc(6), *g = gsl_vector_alloc(6);
  gsl_vector *gi = gsl_vector_alloc(6);
  for (size_t k = 0; k < 6; k++)
    gsl_vector_set(x0, k, gsl_ran_gaussian(r, 1.0));
  gsl_blas_dgemv(CblasNoTrans, 1.0, p.A, x0, 0.0, p.b);
  free_all(p.m, p.fs);
  p.kind = OBJECTIVE_LEAST_SQUARES;
  problem_split(&p);
  double fstar;
  ck_assert_int_eq(objective_reference(p.m, p.fs, xs, &fstar), OBJECTIVE_EXACT);
  for (size_t k = 0; k < 6; k++)
    ck_assert_double_eq_tol(gsl_vector_get(xs, k), gsl_vector_get(x0, k), TOL_RECOVER);
  ck_assert_double_le(fstar, TOL_ZERO_F);

  free_all(p.m, p.fs);
  p.lam = 2.0;
  problem_split(&p);
  ck_assert_int_eq(objective_reference(p.m, p.fs, xs, &fstar), OBJECTIVE_EXACT);
  gsl_vector_set_zero(g);
  for (size_t i = 0; i < p.m; i++) {
    objective_subgrad(p.fs[i], xs, gi);
    gsl_vector_add(g, gi);
  }
  ck_assert_double_le(gsl_blas_dnrm2(g), TOL_ZERO_GRAD);

  gsl_matrix_const_view A2 = gsl_matrix_const_submatrix(p.A, 0, 0, 2, 6);
  gsl_vector_const_view b2 = gsl_vector_const_subvector(p.b, 0, 2);
  objective *under = objective_create(OBJECTIVE_LEAST_SQUARES, &A2.matrix, &b2.vector, 0.0);
  ck_assert_int_eq(objective_reference(1, &under, xs, &fstar), OBJECTIVE_EXACT);
  ck_assert_double_le(fstar, TOL_ZERO_F);
  objective_free(under);
  problem_free(&p);
  gsl_vector_free(x0);
  gsl_vector_free(xs);
  gsl_vector_free(g);
  gsl_vector_free(gi);
  gsl_rng_free(r);
}
END_TEST

START_TEST(test_objective_reference_rejects)
{
  static const double a[2] = {1, 2}, b[1] = {1};
  gsl_matrix *A1 = matrix_of(1, 1, a), *A2 = matrix_of(1, 2, a);
  gsl_vector *y = vector_of(1, b), *x1 = gsl_vector_alloc(1), *x2 = gsl_vector_alloc(2);
  objective *mixed[2] = {objective_create(OBJECTIVE_L1, A1, y, 0.0), objective_create(OBJECTIVE_HINGE, A1, y, 0.0)};
  objective *dims[2] = {objective_create(OBJECTIVE_L1, A1, y, 0.0), objective_create(OBJECTIVE_L1, A2, y, 0.0)};
  double f;
  ck_assert_int_eq(objective_reference(2, mixed, x1, &f), -1);
  ck_assert_int_eq(objective_reference(2, dims, x1, &f), -1);
  ck_assert_int_eq(objective_reference(0, dims, x1, &f), -1);
  ck_assert_int_eq(objective_reference(1, dims, x2, &f), -1);
  free_all(2, mixed);
  free_all(2, dims);
  gsl_matrix_free(A1);
  gsl_matrix_free(A2);
  gsl_vector_free(y);
  gsl_vector_free(x1);
  gsl_vector_free(x2);
}
END_TEST

/* ---- reference: L1 and hinge ---- */

/* Known answers by hand, one row per agent, a_j = 1:
 *  L1, b = (1, 2, 7): F = sum |x - b_j| is least at the median, x* = 2, F* = 6.
 *  L1 + x^2/2: on (1, 2) F' = x - 1 > 0 and on (0, 1) F' = x - 3 < 0, so x* = 1 with
 *    the kink multiplier at the end of its interval (a degenerate case), F* = 7.5.
 *  hinge, labels (1, 1, -1): F = 3 - x on [-1, 1], x* = 1, F* = 2.
 *  hinge + x^2 (lam = 2): F = 3 - x + x^2 there, x* = 1/2, F* = 2.75 (no kink). */
START_TEST(test_objective_reference_known)
{
  static const double bl1[3] = {1, 2, 7}, lab[3] = {1, 1, -1};
  static const struct {
    objective_kind kind;
    const double *b;
    double lam, x, f;
  } cases[] = {{OBJECTIVE_L1, bl1, 0.0, 2.0, 6.0},
               {OBJECTIVE_L1, bl1, 1.0, 1.0, 7.5},
               {OBJECTIVE_HINGE, lab, 0.0, 1.0, 2.0},
               {OBJECTIVE_HINGE, lab, 2.0, 0.5, 2.75}};
  gsl_matrix *A = gsl_matrix_alloc(1, 1);
  gsl_matrix_set(A, 0, 0, 1.0);
  gsl_vector *b = gsl_vector_alloc(1), *xs = gsl_vector_alloc(1);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    objective *fs[3];
    for (size_t i = 0; i < 3; i++) {
      gsl_vector_set(b, 0, cases[c].b[i]);
      fs[i] = objective_create(cases[c].kind, A, b, cases[c].lam / 3);
    }
    double fstar;
    ck_assert_int_eq(objective_reference(3, fs, xs, &fstar), OBJECTIVE_EXACT);
    ck_assert_double_eq_tol(gsl_vector_get(xs, 0), cases[c].x, TOL_KNOWN);
    ck_assert_double_eq_tol(fstar, cases[c].f, TOL_KNOWN);
    free_all(3, fs);
  }
  gsl_matrix_free(A);
  gsl_vector_free(b);
  gsl_vector_free(xs);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Exact brute force in 1-D: F is convex and piecewise quadratic with breakpoints at
 * the kinks, so its minimum is at a kink or at the stationary point -S/lam of the
 * piece with slope sum S. Every candidate is evaluated; none can be below F*. */
static double brute_force_1d(const problem *p)
{
  size_t N = p->A->size1, nk = 0;
  double *kinks = malloc(N * sizeof *kinks), best = INFINITY;
  gsl_vector *x = gsl_vector_alloc(1);
  for (size_t j = 0; j < N; j++) {
    double a = gsl_matrix_get(p->A, j, 0), b = gsl_vector_get(p->b, j);
    if (a != 0.0) kinks[nk++] = p->kind == OBJECTIVE_L1 ? b / a : 1.0 / (b * a);
  }
  qsort(kinks, nk, sizeof *kinks, cmp_double);
  for (size_t k = 0; k <= nk; k++) {
    double cand[2], probe = k == 0 ? kinks[0] - 1.0 : k == nk ? kinks[nk - 1] + 1.0 : 0.5 * (kinks[k - 1] + kinks[k]);
    size_t nc = 0;
    if (k < nk) cand[nc++] = kinks[k];
    if (p->lam > 0) {
      double S = 0.0;
      for (size_t j = 0; j < N; j++) {
        gsl_vector_set(x, 0, probe);
        double t, lo, hi, s;
        kink_row(p, j, x, &t, &lo, &hi, &s);
        S += (t < 0 ? lo : hi) * s * gsl_matrix_get(p->A, j, 0);
      }
      cand[nc++] = -S / p->lam;
    }
    for (size_t c = 0; c < nc; c++) {
      gsl_vector_set(x, 0, cand[c]);
      best = fmin(best, sum_of(p->m, p->fs, x));
    }
  }
  free(kinks);
  gsl_vector_free(x);
  return best;
}

/* Exact brute force in 2-D without regularisation: F is piecewise linear and bounded
 * below, so a vertex of the kink-line arrangement attains the minimum; try them all. */
static double brute_force_2d(const problem *p)
{
  size_t N = p->A->size1;
  double best = INFINITY;
  gsl_vector *x = gsl_vector_alloc(2);
  for (size_t j = 0; j < N; j++)
    for (size_t k = j + 1; k < N; k++) {
      double s1 = p->kind == OBJECTIVE_L1 ? 1.0 : gsl_vector_get(p->b, j);
      double s2 = p->kind == OBJECTIVE_L1 ? 1.0 : gsl_vector_get(p->b, k);
      double a11 = s1 * gsl_matrix_get(p->A, j, 0), a12 = s1 * gsl_matrix_get(p->A, j, 1);
      double a21 = s2 * gsl_matrix_get(p->A, k, 0), a22 = s2 * gsl_matrix_get(p->A, k, 1);
      double c1 = p->kind == OBJECTIVE_L1 ? gsl_vector_get(p->b, j) : 1.0;
      double c2 = p->kind == OBJECTIVE_L1 ? gsl_vector_get(p->b, k) : 1.0;
      double det = a11 * a22 - a12 * a21;
      if (fabs(det) < DET_PARALLEL) continue;
      gsl_vector_set(x, 0, (c1 * a22 - c2 * a12) / det);
      gsl_vector_set(x, 1, (a11 * c2 - a21 * c1) / det);
      best = fmin(best, sum_of(p->m, p->fs, x));
    }
  gsl_vector_free(x);
  return best;
}

/* L1 and hinge in 1-D (with and without ridge) and 2-D (without), 40 rows over 3
 * agents, 5 random problems each: the reference is exact and matches the brute force
 * to TOL_BRUTE_REL, and is never below it by more than rounding. */
START_TEST(test_objective_reference_brute_force)
{
  gsl_rng *r = rng_create(4, RNG_ROLE_DATA, 0);
  static const objective_kind kinds[2] = {OBJECTIVE_L1, OBJECTIVE_HINGE};
  static const struct {
    size_t dim;
    double lam;
  } shapes[3] = {{1, 0.0}, {1, 0.8}, {2, 0.0}};
  gsl_vector *xs = gsl_vector_alloc(2);
  for (size_t kd = 0; kd < 2; kd++)
    for (size_t s = 0; s < 3; s++)
      for (int rep = 0; rep < 5; rep++) {
        problem p = random_problem(kinds[kd], 3, 40, shapes[s].dim, shapes[s].lam, r);
        gsl_vector_view x = gsl_vector_subvector(xs, 0, shapes[s].dim);
        double fstar, fbf = shapes[s].dim == 1 ? brute_force_1d(&p) : brute_force_2d(&p);
        ck_assert_int_eq(objective_reference(p.m, p.fs, &x.vector, &fstar), OBJECTIVE_EXACT);
        ck_assert_msg(fabs(fstar - fbf) <= TOL_BRUTE_REL * (1.0 + fbf),
                      "%s dim %zu lam %g: f* = %.17g, brute force %.17g", objective_kind_name(kinds[kd]), shapes[s].dim,
                      shapes[s].lam, fstar, fbf);
        problem_free(&p);
      }
  gsl_vector_free(xs);
  gsl_rng_free(r);
}
END_TEST

/* dim 8, 4 agents x 15 rows: L1 and hinge, with and without ridge. The reference is
 * exact; at x* the optimality conditions hold (multipliers inside their intervals to
 * TOL_KKT, subgradient residual <= TOL_KKT) and no step of 1e-1 .. 1e-7 in 300 random
 * directions decreases F. */
START_TEST(test_objective_reference_optimality)
{
  gsl_rng *r = rng_create(5, RNG_ROLE_DATA, 0);
  static const objective_kind kinds[2] = {OBJECTIVE_L1, OBJECTIVE_HINGE};
  static const double lams[2] = {0.0, 0.5};
  gsl_vector *xs = gsl_vector_alloc(8);
  for (size_t kd = 0; kd < 2; kd++)
    for (size_t l = 0; l < 2; l++) {
      problem p = random_problem(kinds[kd], 4, 60, 8, lams[l], r);
      double fstar, viol;
      ck_assert_int_eq(objective_reference(p.m, p.fs, xs, &fstar), OBJECTIVE_EXACT);
      double res = kkt_residual(&p, xs, TOL_KKT, &viol);
      ck_assert_msg(res <= TOL_KKT && viol <= TOL_KKT, "%s lam %g: KKT residual %g, multiplier violation %g",
                    objective_kind_name(kinds[kd]), lams[l], res, viol);
      assert_no_descent(p.m, p.fs, xs, r, 300);
      problem_free(&p);
    }
  gsl_vector_free(xs);
  gsl_rng_free(r);
}
END_TEST

/* Fewer rows than unknowns and no ridge: L1 interpolates (F* = 0) on an affine set
 * with no vertex, so the active-set step cannot certify it and the smoothed minimiser
 * comes back, within the documented N * mu (here far below TOL_SMOOTHED). */
START_TEST(test_objective_reference_smoothed)
{
  gsl_rng *r = rng_create(6, RNG_ROLE_DATA, 0);
  problem p = random_problem(OBJECTIVE_L1, 2, 4, 6, 0.0, r);
  gsl_vector *xs = gsl_vector_alloc(6);
  double fstar;
  ck_assert_int_eq(objective_reference(p.m, p.fs, xs, &fstar), OBJECTIVE_SMOOTHED);
  ck_assert_double_le(fstar, TOL_SMOOTHED);
  problem_free(&p);
  gsl_vector_free(xs);
  gsl_rng_free(r);
}
END_TEST

START_TEST(test_objective_reference_determinism)
{
  gsl_rng *r = rng_create(7, RNG_ROLE_DATA, 0);
  problem p = random_problem(OBJECTIVE_HINGE, 3, 45, 5, 0.1, r);
  gsl_vector *x1 = gsl_vector_alloc(5), *x2 = gsl_vector_alloc(5);
  double f1, f2;
  objective_reference(p.m, p.fs, x1, &f1);
  objective_reference(p.m, p.fs, x2, &f2);
  ck_assert_mem_eq(x1->data, x2->data, 5 * sizeof(double));
  ck_assert_mem_eq(&f1, &f2, sizeof f1);
  problem_free(&p);
  gsl_vector_free(x1);
  gsl_vector_free(x2);
  gsl_rng_free(r);
}
END_TEST

static Suite *objective_reference_suite(void)
{
  Suite *s = suite_create("objective_reference");
  ADD_TCASE(s, "reference_ls", test_objective_ls_known, test_objective_ls_recovers, test_objective_reference_rejects);
  ADD_TCASE(s, "reference_nonsmooth", test_objective_reference_known, test_objective_reference_brute_force,
            test_objective_reference_optimality, test_objective_reference_smoothed);
  ADD_TCASE(s, "determinism", test_objective_reference_determinism);
  return s;
}

CHECK_MAIN(objective_reference_suite)

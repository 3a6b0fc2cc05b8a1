/* check_objective.c - Check suite for models/objective: values, subgradients (central
 * differences, the subgradient inequality, the choice at kinks), the exact reference
 * solver (known answers, brute force in 1-D and 2-D, optimality conditions and
 * perturbations in higher dimension) and the synthetic generator. */

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

#define MAX_AGENTS 8

/* Tolerances, each with where it comes from (u = 2^-53 ~ 1.1e-16). */
/* TOL_NO_DESCENT_REL: F, a sum of <= 60 non-negative rows of dim <= 8, rounds by
 * ~(60 + 8) u F ~ 7.5e-15 F; the smallest step, 1e-7, raises F by ~1e-7 at a minimum. */
#define TOL_NO_DESCENT_REL 1e-13
/* TOL_FD_REL: a quadratic's central difference has no truncation error; rounding is
 * u |f| / h ~ 1e-9 for values ~1e2 and h = 1e-5; 1e-7 leaves a margin. */
#define TOL_FD_REL 1e-7
/* TOL_SUBGRAD_REL: f(x), f(y) and g.(y - x) over 9 rows of dim 3 each round by ~12 u of
 * their magnitude ~ 1.3e-15; 1e-12 leaves a margin. */
#define TOL_SUBGRAD_REL 1e-12
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
/* TOL_REPLAY_REL: the same rows summed by objective_synthetic's objective and by one made
 * here from the replayed draws (the same code: equal in practice). */
#define TOL_REPLAY_REL 1e-12

/* ---- helpers ---- */

static gsl_matrix *matrix_of(size_t n1, size_t n2, const double *v)
{
  gsl_matrix *A = gsl_matrix_alloc(n1, n2);
  memcpy(A->data, v, n1 * n2 * sizeof *v);
  return A;
}

static gsl_vector *vector_of(size_t n, const double *v)
{
  gsl_vector *x = gsl_vector_alloc(n);
  memcpy(x->data, v, n * sizeof *v);
  return x;
}

static double value_of(const objective *f, const gsl_vector *x)
{
  double v;
  ck_assert_int_eq(objective_value(f, x, &v), 0);
  return v;
}

static double sum_of(size_t m, objective *const *fs, const gsl_vector *x)
{
  double v;
  ck_assert_int_eq(objective_sum_value(m, fs, x, &v), 0);
  return v;
}

static void free_all(size_t m, objective **fs)
{
  for (size_t i = 0; i < m; i++)
    objective_free(fs[i]);
}

/* A test problem kept in the clear: all rows in A (N x dim), targets or labels in b,
 * split over m agents as rows [start[i], start[i+1]). */
typedef struct problem {
  objective_kind kind;
  gsl_matrix *A;
  gsl_vector *b;
  double lam;
  size_t m, start[MAX_AGENTS + 1];
  objective *fs[MAX_AGENTS];
} problem;

/* Splits the rows as evenly as possible, every agent carrying reg = lam / m. */
static void problem_split(problem *p)
{
  size_t N = p->A->size1;
  for (size_t i = 0; i <= p->m; i++)
    p->start[i] = i * N / p->m;
  for (size_t i = 0; i < p->m; i++) {
    size_t r = p->start[i + 1] - p->start[i];
    gsl_matrix_const_view Ai = gsl_matrix_const_submatrix(p->A, p->start[i], 0, r, p->A->size2);
    gsl_vector_const_view bi = gsl_vector_const_subvector(p->b, p->start[i], r);
    p->fs[i] = objective_create(p->kind, &Ai.matrix, &bi.vector, p->lam / (double)p->m);
    ck_assert_ptr_nonnull(p->fs[i]);
  }
}

/* N Gaussian rows; targets a.x0 + Laplace(0.5) noise, or labels sign(a.x0 + N(0,1)). */
static problem random_problem(objective_kind kind, size_t m, size_t N, size_t dim, double lam, gsl_rng *r)
{
  problem p = {kind, gsl_matrix_alloc(N, dim), gsl_vector_alloc(N), lam, m, {0}, {NULL}};
  gsl_vector *x0 = gsl_vector_alloc(dim);
  for (size_t k = 0; k < dim; k++)
    gsl_vector_set(x0, k, gsl_ran_gaussian(r, 1.0));
  for (size_t j = 0; j < N; j++) {
    double z = 0.0;
    for (size_t k = 0; k < dim; k++) {
      gsl_matrix_set(p.A, j, k, gsl_ran_gaussian(r, 1.0));
      z += gsl_matrix_get(p.A, j, k) * gsl_vector_get(x0, k);
    }
    if (kind == OBJECTIVE_HINGE)
      gsl_vector_set(p.b, j, z + gsl_ran_gaussian(r, 1.0) >= 0.0 ? 1.0 : -1.0);
    else
      gsl_vector_set(p.b, j, z + gsl_ran_laplace(r, 0.5));
  }
  gsl_vector_free(x0);
  problem_split(&p);
  return p;
}

static void problem_free(problem *p)
{
  free_all(p->m, p->fs);
  gsl_matrix_free(p->A);
  gsl_vector_free(p->b);
}

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
  ADD_TCASE(s, "reference_ls", test_objective_ls_known, test_objective_ls_recovers, test_objective_reference_rejects);
  ADD_TCASE(s, "reference_nonsmooth", test_objective_reference_known, test_objective_reference_brute_force,
            test_objective_reference_optimality, test_objective_reference_smoothed);
  ADD_TCASE(s, "determinism", test_objective_reference_determinism);
  ADD_TCASE(s, "synthetic", test_objective_synthetic_draws, test_objective_synthetic_kinds);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_objective_bad_kind_name_aborts, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(objective_suite)

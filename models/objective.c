/* objective.c - per-agent convex objectives, their subgradients, an exact
 * centralized reference and a synthetic problem generator.
 *
 * Values and subgradients go row by row in row order: a fixed order of additions,
 * no scratch space, and the objective stays const on the hot path.
 *
 * The reference for L1 and hinge writes both as one piecewise-linear problem,
 *   F(x) = sum_j h(t_j) + lam/2 ||x||^2,  t_j = a_j.x - c_j,  h(t) = mid t + half |t|,
 * L1 with (mid, half) = (0, 1), and hinge with rows y_j a_j, c_j = 1 and (-1/2, 1/2),
 * because max(0, -t) = (|t| - t)/2. Smoothing |t| into sqrt(t^2 + mu^2), with mu
 * driven down and each smoothed problem minimised by Newton's method, finds the rows
 * that sit at a kink at the optimum; with that active set Z and the other rows' signs, the
 * optimality conditions
 *   lam x + sum_{j not in Z} h'(t_j) a_j + sum_{j in Z} u_j a_j = 0,
 *   a_j.x = c_j and u_j in [mid - half, mid + half] for j in Z
 * are a linear system; its solution is the exact minimiser whenever the multipliers
 * land in their intervals and no other row changes sign. */

#include "models/objective.h"
#include "models/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_randist.h>

/* Smoothing levels: mu = mu0 * 10^-k for k = 0..12, mu0 the initial residual scale. */
#define SMOOTH_LEVELS 12
/* Newton per level: stop when a step moves x by <= 1e-14 relative, or after 100 steps
 * (continuation from the previous level normally needs fewer than 10). */
#define NEWTON_TOL 1e-14
#define NEWTON_MAX_ITER 100
/* Active-set checks: multipliers may leave their interval, and rows outside Z cross
 * their kink, by 1e-9 of their scale before the candidate is refused. A pivot below
 * 1e-12 of the largest marks the KKT matrix singular (Z not independent). */
#define KKT_TOL 1e-9
#define PIVOT_RATIO 1e-12

struct objective {
  objective_kind kind;
  gsl_matrix *A;
  gsl_vector *b;
  double reg;
};

static const char *kind_names[] = {"least-squares", "l1", "hinge"};

/* ---- the objective type ---- */

static int all_finite(const double *v, size_t n, size_t stride)
{
  for (size_t k = 0; k < n; k++)
    if (!isfinite(v[k * stride])) return 0;
  return 1;
}

static int valid_input(objective_kind kind, const gsl_matrix *A, const gsl_vector *b, double reg)
{
  if ((unsigned)kind > OBJECTIVE_HINGE || A->size1 != b->size || !(reg >= 0.0 && isfinite(reg))) return 0;
  for (size_t j = 0; j < A->size1; j++) {
    if (!all_finite(A->data + j * A->tda, A->size2, 1)) return 0;
    double y = gsl_vector_get(b, j);
    if (kind == OBJECTIVE_HINGE && y != 1.0 && y != -1.0) return 0;
  }
  return all_finite(b->data, b->size, b->stride);
}

objective *objective_create(objective_kind kind, const gsl_matrix *A, const gsl_vector *b, double reg)
{
  if (A == NULL || b == NULL || !valid_input(kind, A, b, reg)) return NULL;
  objective *f = mem_alloc(sizeof *f);
  f->kind = kind;
  f->A = mem_matrix(A->size1, A->size2);
  gsl_matrix_memcpy(f->A, A);
  f->b = gsl_vector_alloc(b->size);
  if (f->b == NULL) mem_die("objective", "out of memory");
  gsl_vector_memcpy(f->b, b);
  f->reg = reg;
  return f;
}

void objective_free(objective *f)
{
  if (f == NULL) return;
  gsl_matrix_free(f->A);
  gsl_vector_free(f->b);
  free(f);
}

size_t objective_dim(const objective *f) { return f->A->size2; }
size_t objective_rows(const objective *f) { return f->A->size1; }
objective_kind objective_get_kind(const objective *f) { return f->kind; }
double objective_reg(const objective *f) { return f->reg; }

/* a_j.x for row j of f. */
static double row_dot(const gsl_matrix *A, size_t j, const gsl_vector *x)
{
  gsl_vector_const_view a = gsl_matrix_const_row(A, j);
  double d;
  gsl_blas_ddot(&a.vector, x, &d);
  return d;
}

/* The loss of row j at x, and through *slope the factor s with s a_j its share of
 * the subgradient (the chosen element at a kink being 0). */
static double row_loss(const objective *f, size_t j, const gsl_vector *x, double *slope)
{
  double z = row_dot(f->A, j, x), b = gsl_vector_get(f->b, j), r = z - b;
  switch (f->kind) {
  case OBJECTIVE_LEAST_SQUARES: *slope = r; return 0.5 * r * r;
  case OBJECTIVE_L1: *slope = (r > 0.0) - (r < 0.0); return fabs(r);
  case OBJECTIVE_HINGE: *slope = b * z < 1.0 ? -b : 0.0; return b * z < 1.0 ? 1.0 - b * z : 0.0;
  }
  mem_die("objective", "unknown kind");
}

int objective_value(const objective *f, const gsl_vector *x, double *value)
{
  if (x->size != objective_dim(f)) return -1;
  double s = 0.0, slope, xx;
  for (size_t j = 0; j < objective_rows(f); j++)
    s += row_loss(f, j, x, &slope);
  gsl_blas_ddot(x, x, &xx);
  *value = s + 0.5 * f->reg * xx;
  return 0;
}

int objective_subgrad(const objective *f, const gsl_vector *x, gsl_vector *g)
{
  if (x->size != objective_dim(f) || g->size != objective_dim(f)) return -1;
  gsl_vector_memcpy(g, x);
  gsl_vector_scale(g, f->reg);
  for (size_t j = 0; j < objective_rows(f); j++) {
    double slope;
    row_loss(f, j, x, &slope);
    if (slope != 0.0) {
      gsl_vector_const_view a = gsl_matrix_const_row(f->A, j);
      gsl_blas_daxpy(slope, &a.vector, g);
    }
  }
  return 0;
}

int objective_sum_value(size_t m, objective *const *fs, const gsl_vector *x, double *value)
{
  double s = 0.0, v;
  for (size_t i = 0; i < m; i++) {
    if (objective_value(fs[i], x, &v) != 0) return -1;
    s += v;
  }
  *value = s;
  return 0;
}

/* ---- ridge least squares through GSL's SVD ---- */

/* Minimises ||X x - y||^2 + lam ||x||^2 over the first N rows of X and y, where X
 * and y have N + dim rows: the last dim rows are set to sqrt(lam) I and 0 so the
 * ridge is one more least-squares block. Singular values below DBL_EPSILON times
 * the largest are dropped (GSL's truncation), giving the minimum-norm solution. */
typedef struct ridge_ws {
  gsl_matrix *X;
  gsl_vector *y;
  gsl_multifit_linear_workspace *w;
} ridge_ws;

static void ridge_init(ridge_ws *ws, size_t N, size_t dim)
{
  ws->X = mem_matrix(N + dim, dim);
  ws->y = gsl_vector_alloc(N + dim);
  ws->w = gsl_multifit_linear_alloc(N + dim, dim);
  if (ws->y == NULL || ws->w == NULL) mem_die("objective", "out of memory");
}

static void ridge_free(ridge_ws *ws)
{
  gsl_matrix_free(ws->X);
  gsl_vector_free(ws->y);
  gsl_multifit_linear_free(ws->w);
}

static void ridge_solve(ridge_ws *ws, double lam, gsl_vector *x)
{
  size_t dim = ws->X->size2, N = ws->X->size1 - dim;
  gsl_matrix_view tail = gsl_matrix_submatrix(ws->X, N, 0, dim, dim);
  gsl_matrix_set_identity(&tail.matrix);
  gsl_matrix_scale(&tail.matrix, sqrt(lam));
  gsl_vector_view ytail = gsl_vector_subvector(ws->y, N, dim);
  gsl_vector_set_zero(&ytail.vector);
  double rnorm, snorm;
  gsl_multifit_linear_svd(ws->X, ws->w);
  gsl_multifit_linear_solve(0.0, ws->X, ws->y, x, &rnorm, &snorm, ws->w);
}

/* ---- the stacked problem: least squares uses A and c, L1 and hinge all of it ---- */

typedef struct pwl {
  gsl_matrix *A; /* N x dim, all agents' rows in agent order */
  gsl_vector *c;
  double mid, half, lam;
} pwl;

/* Stacks the agents' rows; for hinge each row is multiplied by its label. */
static pwl stack(size_t m, objective *const *fs, double lam)
{
  size_t N = 0, dim = objective_dim(fs[0]), row = 0;
  for (size_t i = 0; i < m; i++)
    N += objective_rows(fs[i]);
  pwl P = {mem_matrix(N, dim), gsl_vector_alloc(N), 0.0, 1.0, lam};
  if (P.c == NULL) mem_die("objective", "out of memory");
  int hinge = objective_get_kind(fs[0]) == OBJECTIVE_HINGE;
  if (hinge) {
    P.mid = -0.5;
    P.half = 0.5;
  }
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < objective_rows(fs[i]); j++, row++) {
      gsl_vector_const_view a = gsl_matrix_const_row(fs[i]->A, j);
      gsl_vector_view dst = gsl_matrix_row(P.A, row);
      double b = gsl_vector_get(fs[i]->b, j);
      gsl_vector_memcpy(&dst.vector, &a.vector);
      if (hinge) gsl_vector_scale(&dst.vector, b);
      gsl_vector_set(P.c, row, hinge ? 1.0 : b);
    }
  return P;
}

static void pwl_free(pwl *P)
{
  gsl_matrix_free(P->A);
  gsl_vector_free(P->c);
}

/* t = A x - c. */
static void residuals(const pwl *P, const gsl_vector *x, gsl_vector *t)
{
  gsl_vector_memcpy(t, P->c);
  gsl_blas_dgemv(CblasNoTrans, 1.0, P->A, x, -1.0, t);
}

/* F_mu(x) = sum_j (mid t_j + half sqrt(t_j^2 + mu^2)) + lam/2 ||x||^2, and t = A x - c;
 * mu = 0 gives F itself (hypot(t, 0) = |t| exactly). */
static double smoothed_value(const pwl *P, double mu, const gsl_vector *x, gsl_vector *t)
{
  residuals(P, x, t);
  double s = 0.0, xx;
  for (size_t j = 0; j < t->size; j++) {
    double tj = gsl_vector_get(t, j);
    s += P->mid * tj + P->half * hypot(tj, mu);
  }
  gsl_blas_ddot(x, x, &xx);
  return s + 0.5 * P->lam * xx;
}

/* Scratch for Newton's method on F_mu. */
typedef struct newton_ws {
  gsl_vector *t, *q, *g, *dx, *xt;
  gsl_matrix *B, *H;
  gsl_permutation *perm;
} newton_ws;

static void newton_init(newton_ws *w, size_t N, size_t dim)
{
  w->t = gsl_vector_alloc(N);
  w->q = gsl_vector_alloc(N);
  w->g = gsl_vector_alloc(dim);
  w->dx = gsl_vector_alloc(dim);
  w->xt = gsl_vector_alloc(dim);
  w->B = mem_matrix(N, dim);
  w->H = mem_matrix(dim, dim);
  w->perm = gsl_permutation_alloc(dim);
  if (!w->t || !w->q || !w->g || !w->dx || !w->xt || !w->perm) mem_die("objective", "out of memory");
}

static void newton_free(newton_ws *w)
{
  gsl_vector_free(w->t);
  gsl_vector_free(w->q);
  gsl_vector_free(w->g);
  gsl_vector_free(w->dx);
  gsl_vector_free(w->xt);
  gsl_matrix_free(w->B);
  gsl_matrix_free(w->H);
  gsl_permutation_free(w->perm);
}

/* The Newton direction of F_mu at x (w->t holding A x - c) into w->dx; returns the
 * directional derivative g.dx. Gradient A^T q + lam x with q_j = mid + half t_j/p_j,
 * Hessian A^T diag(half mu^2/p_j^3) A + lam I with p_j = sqrt(t_j^2 + mu^2). The
 * Hessian spans many orders of magnitude as mu -> 0 and is singular without ridge
 * when fewer than dim rows sit at a kink, so it is factored with GSL's modified
 * Cholesky (Gill, Murray and Wright), which shifts the diagonal where it must to make
 * the factor positive definite: the step stays a descent direction. */
static double newton_direction(const pwl *P, double mu, newton_ws *w, const gsl_vector *x)
{
  size_t N = P->A->size1;
  for (size_t j = 0; j < N; j++) {
    double tj = gsl_vector_get(w->t, j), p = hypot(tj, mu), r = mu / p;
    gsl_vector_set(w->q, j, P->mid + P->half * tj / p);
    gsl_vector_const_view a = gsl_matrix_const_row(P->A, j);
    gsl_vector_view bj = gsl_matrix_row(w->B, j);
    gsl_vector_memcpy(&bj.vector, &a.vector);
    gsl_vector_scale(&bj.vector, sqrt(P->half * r * r / p));
  }
  gsl_vector_memcpy(w->g, x);
  gsl_blas_dgemv(CblasTrans, 1.0, P->A, w->q, P->lam, w->g);
  gsl_matrix_set_identity(w->H);
  gsl_matrix_scale(w->H, P->lam);
  gsl_blas_dsyrk(CblasLower, CblasTrans, 1.0, w->B, 1.0, w->H); /* mcholesky reads the lower half */
  gsl_linalg_mcholesky_decomp(w->H, w->perm, NULL);
  gsl_linalg_mcholesky_solve(w->H, w->perm, w->g, w->dx);
  gsl_vector_scale(w->dx, -1.0);
  double slope;
  gsl_blas_ddot(w->g, w->dx, &slope);
  return slope;
}

/* Armijo backtracking from x along w->dx: halves the step until F_mu decreases by at
 * least 1e-4 of the linear prediction. Leaves x + step * dx in w->xt and returns the
 * step, or 0 if even 2^-60 fails (no decrease is visible in floating point). */
static double line_search(const pwl *P, double mu, newton_ws *w, const gsl_vector *x, double F, double slope)
{
  for (double step = 1.0; step >= 0x1p-60; step *= 0.5) {
    gsl_vector_memcpy(w->xt, x);
    gsl_blas_daxpy(step, w->dx, w->xt);
    if (smoothed_value(P, mu, w->xt, w->t) <= F + 1e-4 * step * slope) return step;
  }
  return 0.0;
}

/* Minimises F_mu from x, in place, by damped Newton steps until a step moves x by
 * <= NEWTON_TOL relative or cannot decrease F_mu any more. */
static void newton(const pwl *P, double mu, newton_ws *w, gsl_vector *x)
{
  for (int it = 0; it < NEWTON_MAX_ITER; it++) {
    double F = smoothed_value(P, mu, x, w->t), slope = newton_direction(P, mu, w, x);
    double step = slope < 0.0 ? line_search(P, mu, w, x, F, slope) : 0.0;
    if (step == 0.0) return;
    gsl_vector_memcpy(x, w->xt);
    if (step * gsl_blas_dnrm2(w->dx) <= NEWTON_TOL * (1.0 + gsl_blas_dnrm2(x))) return;
  }
}

static int sgn(double v) { return (v > 0.0) - (v < 0.0); }

/* Sort key for the active-set guess: rows closest to their kink first, ties by index. */
typedef struct kink_key {
  double dist;
  size_t row;
} kink_key;

static int cmp_kink(const void *pa, const void *pb)
{
  const kink_key *a = pa, *b = pb;
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* Scale of a_j.x - c_j's computation, for a rounding-aware sign test. */
static double row_scale(const pwl *P, size_t j, const gsl_vector *x)
{
  double s = fabs(gsl_vector_get(P->c, j));
  for (size_t k = 0; k < x->size; k++)
    s += fabs(gsl_matrix_get(P->A, j, k) * gsl_vector_get(x, k));
  return s;
}

/* Builds the KKT system of active set Z = rows key[0..k) with the other rows' slopes
 * taken from the signs of t: unknowns (x, u), equations
 * lam x + A_Z^T u = -sum_{j not in Z} h'(t_j) a_j and A_Z x = c_Z. */
static void kkt_system(const pwl *P, const gsl_vector *t, const kink_key *key, size_t k, gsl_matrix *M,
                       gsl_vector *rhs)
{
  size_t dim = P->A->size2, N = P->A->size1;
  gsl_matrix_set_zero(M);
  gsl_vector_set_zero(rhs);
  gsl_vector_view g = gsl_vector_subvector(rhs, 0, dim);
  for (size_t r = k; r < N; r++) {
    size_t j = key[r].row;
    gsl_vector_const_view a = gsl_matrix_const_row(P->A, j);
    gsl_blas_daxpy(-(P->mid + P->half * sgn(gsl_vector_get(t, j))), &a.vector, &g.vector);
  }
  for (size_t i = 0; i < dim; i++)
    gsl_matrix_set(M, i, i, P->lam);
  for (size_t z = 0; z < k; z++) {
    size_t j = key[z].row;
    for (size_t i = 0; i < dim; i++) {
      gsl_matrix_set(M, dim + z, i, gsl_matrix_get(P->A, j, i));
      gsl_matrix_set(M, i, dim + z, gsl_matrix_get(P->A, j, i));
    }
    gsl_vector_set(rhs, dim + z, gsl_vector_get(P->c, j));
  }
}

/* Solves M s = rhs in place of rhs by LU; returns -1 if M is numerically singular. */
static int lu_solve(gsl_matrix *M, gsl_vector *rhs)
{
  size_t K = M->size1;
  gsl_permutation *perm = gsl_permutation_alloc(K);
  gsl_vector *sol = gsl_vector_alloc(K);
  if (perm == NULL || sol == NULL) mem_die("objective", "out of memory");
  int signum;
  gsl_linalg_LU_decomp(M, perm, &signum);
  double lo = INFINITY, hi = 0.0;
  for (size_t i = 0; i < K; i++) {
    double p = fabs(gsl_matrix_get(M, i, i));
    lo = p < lo ? p : lo;
    hi = p > hi ? p : hi;
  }
  int ok = K == 0 || (hi > 0.0 && lo > PIVOT_RATIO * hi);
  if (ok) {
    gsl_linalg_LU_solve(M, perm, rhs, sol);
    gsl_vector_memcpy(rhs, sol);
  }
  gsl_permutation_free(perm);
  gsl_vector_free(sol);
  return ok ? 0 : -1;
}

/* The candidate solves the KKT conditions: multipliers in [mid - half, mid + half]
 * and every row outside Z on the side of its kink that its slope assumed. */
static int kkt_holds(const pwl *P, const gsl_vector *t, const kink_key *key, size_t k, const gsl_vector *sol,
                     const gsl_vector *x)
{
  size_t dim = P->A->size2, N = P->A->size1;
  double slack = KKT_TOL * P->half;
  for (size_t z = 0; z < k; z++) {
    double u = gsl_vector_get(sol, dim + z);
    if (!(u >= P->mid - P->half - slack && u <= P->mid + P->half + slack)) return 0;
  }
  for (size_t r = k; r < N; r++) {
    size_t j = key[r].row;
    double tn = row_dot(P->A, j, x) - gsl_vector_get(P->c, j), tol = KKT_TOL * row_scale(P, j, x);
    int s = sgn(gsl_vector_get(t, j));
    if (s == 0 ? fabs(tn) > tol : s * tn < -tol) return 0;
  }
  return 1;
}

/* Tries active sets of the k = 0..min(dim, N) rows nearest their kinks at xs; on
 * success writes the exact minimiser into x and returns 0, else returns -1. A
 * candidate must also not be worse than xs, a guard against a wrong active set
 * slipping through the tolerances. */
static int polish(const pwl *P, const gsl_vector *xs, gsl_vector *x, gsl_vector *t)
{
  size_t dim = P->A->size2, N = P->A->size1, kmax = dim < N ? dim : N;
  double fs = smoothed_value(P, 0.0, xs, t);
  kink_key *key = mem_alloc(N * sizeof *key);
  for (size_t j = 0; j < N; j++)
    key[j] = (kink_key){fabs(gsl_vector_get(t, j)), j};
  qsort(key, N, sizeof *key, cmp_kink);
  int found = -1;
  for (size_t k = 0; k <= kmax && found != 0; k++) {
    gsl_matrix *M = mem_matrix(dim + k, dim + k);
    gsl_vector *sol = gsl_vector_alloc(dim + k);
    if (sol == NULL) mem_die("objective", "out of memory");
    residuals(P, xs, t);
    kkt_system(P, t, key, k, M, sol);
    if (lu_solve(M, sol) == 0) {
      gsl_vector_const_view xc = gsl_vector_const_subvector(sol, 0, dim);
      gsl_vector_memcpy(x, &xc.vector);
      if (kkt_holds(P, t, key, k, sol, x) && smoothed_value(P, 0.0, x, t) <= fs + 1e-12 * (1.0 + fabs(fs))) found = 0;
    }
    gsl_matrix_free(M);
    gsl_vector_free(sol);
  }
  free(key);
  return found;
}

/* The ridge least-squares fit of A x = c into x, the smoothing's starting point. */
static void ridge_start(const pwl *P, gsl_vector *x)
{
  size_t N = P->A->size1, dim = P->A->size2;
  ridge_ws ws;
  ridge_init(&ws, N, dim);
  gsl_matrix_view top = gsl_matrix_submatrix(ws.X, 0, 0, N, dim);
  gsl_vector_view ytop = gsl_vector_subvector(ws.y, 0, N);
  gsl_matrix_memcpy(&top.matrix, P->A);
  gsl_vector_memcpy(&ytop.vector, P->c);
  ridge_solve(&ws, P->lam, x);
  ridge_free(&ws);
}

/* L1 and hinge: smoothing continuation from the ridge fit, mu0 = its largest
 * residual, trying the exact active-set solve after every level. */
static int solve_pwl(const pwl *P, gsl_vector *xstar)
{
  size_t N = P->A->size1, dim = P->A->size2;
  newton_ws w;
  newton_init(&w, N, dim);
  gsl_vector *xe = gsl_vector_alloc(dim);
  if (xe == NULL) mem_die("objective", "out of memory");
  ridge_start(P, xstar);
  residuals(P, xstar, w.t);
  double mu0 = fabs(gsl_vector_get(w.t, gsl_blas_idamax(w.t)));
  if (!(mu0 > 0.0)) mu0 = 1.0;
  int status = OBJECTIVE_SMOOTHED;
  for (int level = 0; level <= SMOOTH_LEVELS && status != OBJECTIVE_EXACT; level++) {
    newton(P, mu0 * pow(10.0, -level), &w, xstar);
    if (polish(P, xstar, xe, w.t) == 0) {
      gsl_vector_memcpy(xstar, xe);
      status = OBJECTIVE_EXACT;
    }
  }
  newton_free(&w);
  gsl_vector_free(xe);
  return status;
}


int objective_reference(size_t m, objective *const *fs, gsl_vector *xstar, double *fstar)
{
  if (m == 0 || xstar->size != objective_dim(fs[0])) return -1;
  double lam = 0.0;
  for (size_t i = 0; i < m; i++) {
    if (fs[i]->kind != fs[0]->kind || objective_dim(fs[i]) != objective_dim(fs[0])) return -1;
    lam += fs[i]->reg;
  }
  pwl P = stack(m, fs, lam);
  int status = OBJECTIVE_EXACT;
  if (fs[0]->kind == OBJECTIVE_LEAST_SQUARES)
    ridge_start(&P, xstar); /* the least-squares problem itself */
  else
    status = solve_pwl(&P, xstar);
  pwl_free(&P);
  objective_sum_value(m, fs, xstar, fstar);
  return status;
}

/* ---- synthetic problems ---- */

/* Draws one agent's shard (see the header for the order and the noise laws). */
static objective *synthetic_agent(objective_kind kind, size_t dim, size_t rows, double reg,
                                  const gsl_vector *xtrue, gsl_rng *r)
{
  objective *f = mem_alloc(sizeof *f);
  f->kind = kind;
  f->A = mem_matrix(rows, dim);
  f->b = gsl_vector_alloc(rows);
  if (f->b == NULL) mem_die("objective", "out of memory");
  f->reg = reg;
  for (size_t j = 0; j < rows; j++) {
    for (size_t k = 0; k < dim; k++)
      gsl_matrix_set(f->A, j, k, gsl_ran_gaussian(r, 1.0));
    double z = row_dot(f->A, j, xtrue), b;
    switch (kind) {
    case OBJECTIVE_LEAST_SQUARES: b = z + gsl_ran_gaussian(r, 0.1); break;
    case OBJECTIVE_L1: b = z + gsl_ran_laplace(r, 0.5); break;
    default: b = z + gsl_ran_gaussian(r, 1.0) >= 0.0 ? 1.0 : -1.0; break;
    }
    gsl_vector_set(f->b, j, b);
  }
  return f;
}

int objective_synthetic(objective_kind kind, size_t m, size_t dim, size_t rows, double lam, gsl_rng *r,
                        objective **out)
{
  if ((unsigned)kind > OBJECTIVE_HINGE || m == 0 || dim == 0 || rows == 0 || !(lam >= 0.0 && isfinite(lam)))
    return -1;
  gsl_vector *xtrue = gsl_vector_alloc(dim);
  if (xtrue == NULL) mem_die("objective", "out of memory");
  for (size_t k = 0; k < dim; k++)
    gsl_vector_set(xtrue, k, gsl_ran_gaussian(r, 1.0));
  for (size_t i = 0; i < m; i++)
    out[i] = synthetic_agent(kind, dim, rows, lam / (double)m, xtrue, r);
  gsl_vector_free(xtrue);
  return 0;
}

int objective_kind_parse(const char *s, objective_kind *kind)
{
  for (int i = OBJECTIVE_LEAST_SQUARES; i <= OBJECTIVE_HINGE; i++)
    if (strcmp(s, kind_names[i]) == 0) {
      *kind = (objective_kind)i;
      return 0;
    }
  return -1;
}

const char *objective_kind_name(objective_kind kind)
{
  if ((unsigned)kind > OBJECTIVE_HINGE) mem_die("objective", "objective_kind_name: unknown kind");
  return kind_names[kind];
}

#ifndef MODELS_OBJECTIVE_H
#define MODELS_OBJECTIVE_H
/* objective.h - per-agent convex objectives f_i on a private data shard (least
 * squares, L1 regression, hinge loss) with one subgradient each, an exact centralized
 * reference for f* = min_x sum_i f_i(x), and a synthetic problem generator. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

/* f(x) = loss(A x, b) + reg/2 ||x||^2 over the rows a_j of A, where loss is
 *  OBJECTIVE_LEAST_SQUARES  1/2 ||A x - b||^2
 *  OBJECTIVE_L1             ||A x - b||_1
 *  OBJECTIVE_HINGE          sum_j max(0, 1 - b_j a_j.x), labels b_j in {-1, +1}
 * A global term lam/2 ||x||^2 is split evenly: each of the m agents carries
 * reg = lam/m, so sum_i f_i is the regularised problem and every f_i is strongly
 * convex when lam > 0 (objective_synthetic does this). */
typedef enum objective_kind { OBJECTIVE_LEAST_SQUARES, OBJECTIVE_L1, OBJECTIVE_HINGE } objective_kind;

/* What objective_reference achieved. */
typedef enum objective_status {
  OBJECTIVE_EXACT = 0,   /* x* satisfies the optimality conditions to rounding */
  OBJECTIVE_SMOOTHED = 1 /* nonsmooth kinds only: x* minimises a smoothed problem; see objective_reference */
} objective_status;

typedef struct objective objective;

/* Copies A (rows x dim) and b (rows). Returns NULL if a size is 0 or they disagree,
 * reg is negative or not finite, A or b hold a non-finite value, or a hinge label is
 * not -1 or +1. Caller frees with objective_free. */
objective *objective_create(objective_kind kind, const gsl_matrix *A, const gsl_vector *b, double reg);
void objective_free(objective *f);

size_t objective_dim(const objective *f);
size_t objective_rows(const objective *f);
objective_kind objective_get_kind(const objective *f);
double objective_reg(const objective *f);

/* f(x) into *value. Returns 0, or -1 if x has the wrong size. */
int objective_value(const objective *f, const gsl_vector *x, double *value);

/* One subgradient of f at x into g (the gradient for least squares). At a kink the
 * element chosen is the one a zero residual contributes nothing to: sign(0) = 0 for
 * L1, and 0 for a hinge term whose margin b_j a_j.x is exactly 1. Returns 0, or -1
 * if x or g has the wrong size. */
int objective_subgrad(const objective *f, const gsl_vector *x, gsl_vector *g);

/* sum_i f_i(x), added in agent order 0..m-1. Returns 0, or -1 on a size mismatch. */
int objective_sum_value(size_t m, objective *const *fs, const gsl_vector *x, double *value);

/* A minimiser x* of F = sum_i f_i and f* = F(x*) (computed with objective_sum_value).
 * All f_i must have the same kind and dimension. Least squares: SVD solve of the
 * stacked, ridge-augmented system (minimum-norm x* if rank deficient); returns
 * OBJECTIVE_EXACT. L1 and hinge: smoothing |t| by sqrt(t^2 + mu^2) with mu driven
 * down, each smoothed problem minimised by Newton's method, then
 * the active set (rows at a kink) is solved for exactly and its KKT conditions
 * checked; returns OBJECTIVE_EXACT if they hold, else OBJECTIVE_SMOOTHED with x*
 * minimising the mu = 1e-12 * (initial largest residual) problem, for which
 * F(x*) - min F <= N * mu (N rows in all) plus Newton's stopping error. Degenerate
 * problems end up there: no regularisation with fewer rows than dim, separable hinge
 * data without regularisation (f* = 0, x* far out), more than dim rows at a kink at
 * the optimum (repeated rows, integer data). Returns -1 if m == 0, xstar's size is not
 * the dimension, or the kinds or dimensions differ. */
int objective_reference(size_t m, objective *const *fs, gsl_vector *xstar, double *fstar);

/* m agents' objectives of one kind: dimension dim, rows rows each, reg = lam/m each,
 * into out[0..m-1] (caller frees each). Draw order from r: x_true (dim N(0,1)), then
 * agent by agent and row by row the row's dim N(0,1) features and then one noise
 * draw: b = a.x_true + N(0, 0.1^2) for least squares, + Laplace(0.5) for L1, and for
 * hinge b = +1 if a.x_true + N(0,1) >= 0 else -1 (noisy labels: overlapping classes).
 * Seed r with rng_create(seed, RNG_ROLE_DATA, 0). Returns 0, or -1 (out untouched)
 * if m, dim or rows is 0 or lam is negative. */
int objective_synthetic(objective_kind kind, size_t m, size_t dim, size_t rows, double lam, gsl_rng *r,
                        objective **out);

/* Parses "least-squares|l1|hinge"; returns 0 or -1. */
int objective_kind_parse(const char *s, objective_kind *kind);
const char *objective_kind_name(objective_kind kind);

#endif

#ifndef TESTS_OBJECTIVE_UTIL_H
#define TESTS_OBJECTIVE_UTIL_H
/* objective_util.h - what check_objective.c and check_objective_reference.c share: GSL
 * objects from literals, sums of agents' objectives, and random test problems kept in the
 * clear and split over agents. */

#include <check.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_vector.h>

#include "models/objective.h"
#include "models/rng.h"

#define MAX_AGENTS 8

static inline gsl_matrix *matrix_of(size_t n1, size_t n2, const double *v)
{
  gsl_matrix *A = gsl_matrix_alloc(n1, n2);
  memcpy(A->data, v, n1 * n2 * sizeof *v);
  return A;
}

static inline gsl_vector *vector_of(size_t n, const double *v)
{
  gsl_vector *x = gsl_vector_alloc(n);
  memcpy(x->data, v, n * sizeof *v);
  return x;
}

static inline double sum_of(size_t m, objective *const *fs, const gsl_vector *x)
{
  double v;
  ck_assert_int_eq(objective_sum_value(m, fs, x, &v), 0);
  return v;
}

static inline void free_all(size_t m, objective **fs)
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
static inline void problem_split(problem *p)
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
static inline problem random_problem(objective_kind kind, size_t m, size_t N, size_t dim, double lam, gsl_rng *r)
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

static inline void problem_free(problem *p)
{
  free_all(p->m, p->fs);
  gsl_matrix_free(p->A);
  gsl_vector_free(p->b);
}

#endif

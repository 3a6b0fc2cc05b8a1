#ifndef TESTS_ARCHNET_UTIL_H
#define TESTS_ARCHNET_UTIL_H
/* archnet_util.h - what check_archnet.c and check_archnet_partition.c share: the test
 * nets (dense, 2-D and 1-D locally connected), a problem (net, weights, batch) made from
 * a seed, and the exactness the BLAS allows. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>

#include "models/arch.h"
#include "models/archnet.h"
#include "models/rng.h"

/* Sums that archnet computes in the same order in both runs are compared exactly.
 * GSL's CBLAS computes every dgemm/dgemv entry as one loop in k order, whatever
 * the block of columns, so dense layers are exact too; OpenBLAS may block a k-sum
 * differently for different shapes, so that build allows rounding. */
#ifdef DTSIM_OPENBLAS
#define BLAS_RTOL 1e-13
#else
#define BLAS_RTOL 0.0
#endif

/* |x - ref| <= rtol*|ref|: with rtol = 0, bit for bit (up to the sign of zero). */
#define ck_assert_close(x, ref, rtol)                                                          \
  ck_assert_msg(fabs((x) - (ref)) <= (rtol) * fabs(ref), "%s = %.17g, %s = %.17g, rtol %g", #x, \
                (double)(x), #ref, (double)(ref), (double)(rtol))

/* 1-D input of 7 units, dense 9-6-4. */
static inline arch *arch_fc(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 7, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(a, 9), 0);
  ck_assert_int_eq(arch_add_dense(a, 6), 0);
  ck_assert_int_eq(arch_add_dense(a, 4), 0);
  return a;
}

/* 13x11x2 input; LC 3x2 window, strides 2,1, 3 channels -> 6x10x3; LC 2x3 window,
 * stride 1, 2 channels -> 5x8x2; dense 4. Windows and strides differ per axis so a
 * swapped x/y shows; tiles fit px <= 5, py <= 8, so every P in 1..9 has a tiling. */
static inline arch *arch_lc2d(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 13, 11, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 3, 2, 2, 1, 3), 0);
  ck_assert_int_eq(arch_add_local(a, 2, 3, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(a, 4), 0);
  return a;
}

/* 1-D: 20x1x2 input; LC window 4 stride 2, 3 channels -> 9; LC window 3 stride 1,
 * 2 channels -> 7; one logistic output. */
static inline arch *arch_lc1d(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 20, 1, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 4, 1, 2, 1, 3), 0);
  ck_assert_int_eq(arch_add_local(a, 3, 1, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(a, 1), 0);
  return a;
}

typedef struct problem {
  arch *a;
  archnet *n;
  gsl_vector *w;
  gsl_matrix *X;
  double *y;
} problem;

/* Glorot weights plus N(0, 0.3) on every parameter (non-zero biases), N(0,1)
 * inputs, random labels for the loss. */
static inline problem problem_make(arch *a, net_act act, net_loss loss, size_t rows, uint64_t seed)
{
  problem pb = {a, archnet_create(a, act, loss), NULL, NULL, NULL};
  ck_assert_ptr_nonnull(pb.n);
  gsl_rng *r = rng_create(seed, RNG_ROLE_INIT, 0);
  pb.w = gsl_vector_alloc(archnet_n_params(pb.n));
  archnet_init_params(pb.n, r, pb.w);
  for (size_t i = 0; i < pb.w->size; i++)
    pb.w->data[i] += gsl_ran_gaussian(r, 0.3);
  pb.X = gsl_matrix_alloc(rows, arch_units(a, 0));
  for (size_t i = 0; i < rows * pb.X->size2; i++)
    pb.X->data[i] = gsl_ran_gaussian(r, 1.0);
  pb.y = malloc(rows * sizeof *pb.y);
  size_t k = arch_units(a, arch_n_layers(a) - 1);
  for (size_t i = 0; i < rows; i++) {
    switch (loss) {
    case NET_LOSS_MSE: pb.y[i] = gsl_ran_gaussian(r, 1.0); break;
    case NET_LOSS_LOGISTIC: pb.y[i] = (double)gsl_rng_uniform_int(r, 2); break;
    case NET_LOSS_SOFTMAX: pb.y[i] = (double)gsl_rng_uniform_int(r, k); break;
    }
  }
  gsl_rng_free(r);
  return pb;
}

static inline void problem_free(problem *pb)
{
  archnet_free(pb->n);
  arch_free(pb->a);
  gsl_vector_free(pb->w);
  gsl_matrix_free(pb->X);
  free(pb->y);
}

#endif

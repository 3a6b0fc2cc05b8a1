/* check_framework.c - Check suite for models/framework: the eras by name, the constants of
 * megatron-2019 each against its source's own numbers, the RNG copies around a layer, the
 * optimizer's loops added up, and a layer's parameter tensors (models/transformer.h) against
 * the rank's share of the layer's parameters. */

#include <check.h>
#include <math.h>
#include <stddef.h>

#include "models/framework.h"
#include "models/transformer.h"

#include "check_util.h"

/* The constants are products and differences of a few decimal numbers: a few ulps. */
#define FW_TOL 1e-15

START_TEST(test_framework_find)
{
  const framework *f = framework_find("megatron-2019");
  ck_assert_ptr_nonnull(f);
  ck_assert_str_eq(f->name, "megatron-2019");
  ck_assert_ptr_eq(framework_at(0), f);
  ck_assert_ptr_null(framework_at(1));
  ck_assert_ptr_null(framework_find("none"));
  ck_assert_ptr_null(framework_find("megatron-2020"));
  ck_assert_ptr_null(framework_find(NULL));
}
END_TEST

/* megatron-2019's numbers, from the sources models/framework.c names: 40 us per launch
 * (pytorch/pytorch issue 13049); 9.6 - 3.8 us per synchronisation (Gray 2019); 200 MTGP32
 * states of 4,120 bytes (THCTensorRandom.cu), copied to and from pageable memory at 5.5 GB/s,
 * the middle of the 5-6 GB/s rapidsai/dask-cuda pull request 98 measured. */
START_TEST(test_framework_megatron_2019)
{
  const framework *f = framework_find("megatron-2019");
  ck_assert_double_eq_tol(f->op_s, 40e-6, FW_TOL);
  ck_assert_double_eq_tol(f->sync_s, 5.8e-6, FW_TOL);
  ck_assert_double_eq(f->rng_bytes, 824000);
  ck_assert_double_eq(f->pageable_bw, 5.5e9);
  ck_assert_int_eq(f->timer_syncs, 1);
  /* fork: get and set before the dropout, get and set after; checkpointing: one get before
   * the forward, a get and a set before the recomputation, a set after it */
  ck_assert_uint_eq(framework_fwd_copies(f, 1), 5);
  ck_assert_uint_eq(framework_fwd_copies(f, 0), 4);
  ck_assert_uint_eq(framework_recompute_copies(f), 7);
  /* per parameter tensor: zero_grad 2, overflow check 2, master gradients 2, norm 1, Adam 1,
   * master to model 1 kernels; 6 + 10 + 14 + 4 + 28 + 6 bytes per element; two read-backs */
  unsigned kernels = 0, syncs = 0, reduces = 0;
  double bytes = 0;
  for (size_t i = 0; i < f->n_loops; i++) {
    kernels += f->loops[i].kernels;
    bytes += f->loops[i].bytes;
    syncs += (unsigned)f->loops[i].sync;
    reduces += (unsigned)f->loops[i].then_reduce;
  }
  ck_assert_uint_eq(kernels, 9);
  ck_assert_double_eq(bytes, 68);
  ck_assert_uint_eq(syncs, 2);
  ck_assert_uint_eq(reduces, 2);
  ck_assert_int_eq(f->loops[0].where, FRAMEWORK_BEFORE_BACKWARD);
  for (size_t i = 1; i < f->n_loops; i++)
    ck_assert_int_eq(f->loops[i].where, FRAMEWORK_AFTER_BACKWARD);
  /* its own data parallelism: a cat and a division of the fp16 gradients, a copy back each */
  ck_assert_uint_eq(f->flat_kernels, 2);
  ck_assert_double_eq(f->flat_bytes, 8);
  ck_assert_uint_eq(f->copy_kernels, 1);
  ck_assert_double_eq(f->copy_bytes, 4);
}
END_TEST

START_TEST(test_framework_loop_sums)
{
  const framework_loop l = {"x", FRAMEWORK_AFTER_BACKWARD, 2, 10, 1, 0};
  ck_assert_double_eq(framework_loop_kernels(&l, 484), 968);
  ck_assert_double_eq(framework_loop_bytes(&l, 1.5e9), 1.5e10);
}
END_TEST

/* The 12 tensors of a layer add up to the rank's share tensor_dp_elements counts per layer,
 * (12 h^2 + 7 h) / t + 6 h, at Megatron-LM's 1.2B and 8.3B shapes (integers below 2^53). */
START_TEST(test_framework_layer_tensors)
{
  const size_t shapes[][2] = {{1536, 1}, {1536, 8}, {3072, 8}, {64, 2}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    double v[TRANSFORMER_LAYER_TENSORS], sum = 0, h = (double)shapes[k][0], t = (double)shapes[k][1];
    ck_assert_uint_eq(transformer_shard_tensors(shapes[k][0], shapes[k][1], v), TRANSFORMER_LAYER_TENSORS);
    for (size_t i = 0; i < TRANSFORMER_LAYER_TENSORS; i++)
      sum += v[i];
    ck_assert_double_eq(sum, (12 * h * h + 7 * h) / t + 6 * h);
  }
}
END_TEST

static Suite *framework_suite(void)
{
  Suite *s = suite_create("framework");
  ADD_TCASE(s, "find", test_framework_find);
  ADD_TCASE(s, "constants", test_framework_megatron_2019, test_framework_loop_sums);
  ADD_TCASE(s, "tensors", test_framework_layer_tensors);
  return s;
}

CHECK_MAIN(framework_suite)

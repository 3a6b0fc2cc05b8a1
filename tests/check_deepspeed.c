/* check_deepspeed.c - models/deepspeed's ZeRO-3 of DeepSpeed 0.3: a Megatron layer's tensors
 * against Megatron's count, the persistent ones under the default threshold, the padding to
 * the ranks, the gradient buckets, and the host work of each collective worked by hand from
 * partition_parameters.py and stage3.py (v0.3.14). */
#include <check.h>
#include <math.h>

#include "check_util.h"
#include "models/deepspeed.h"

START_TEST(test_deepspeed_tensors)
{
  /* the tensors of a layer add up to its data-parallel elements, (12h^2 + 7h)/t + 6h */
  const double h = 12288, t[] = {1, 8};
  for (int k = 0; k < 2; k++) {
    ds_param p[DS_LAYER_PARAMS];
    ds_layer_params(h, t[k], p);
    double sum = 0, gathered = 0;
    for (int i = 0; i < DS_LAYER_PARAMS; i++) {
      sum += p[i].elems;
      gathered += p[i].elems >= DS_PERSISTENCE_DEFAULT ? p[i].elems : 0;
    }
    ck_assert_double_eq(sum, (12 * h * h + 7 * h) / t[k] + 6 * h);
    /* at h = 12,288 every bias and LayerNorm (at most 4h = 49,152) stays whole: the four weights */
    ck_assert_double_eq(gathered, 12 * h * h / t[k]);
  }
  ds_param r[4];
  ck_assert_uint_eq(ds_rest_params(h, 1, 51200, 2048, 1, 1, r), 4);
  ck_assert_uint_eq(ds_rest_params(h, 8, 51200, 2048, 1, 0, r), 2);
  ck_assert_double_eq(r[0].elems, 51200 * h / 8);
  ck_assert_uint_eq(ds_rest_params(h, 8, 51200, 2048, 0, 0, r), 0);
  /* padding: 12,288 over 1,536 ranks divides; 12,288 over 2,240 pads to 2,240 x 6 */
  ck_assert_double_eq(ds_aligned(12288, 1536), 12288);
  ck_assert_double_eq(ds_aligned(12288, 2240), 13440);
}
END_TEST

START_TEST(test_deepspeed_buckets)
{
  /* reduce_bucket_size 5e8: a 604M gradient flushes what came before it; a small one after it
   * flushes it; small ones join */
  ds_bucket b = {0, 0}, f;
  ck_assert_int_eq(ds_bucket_add(&b, 12288, DS_REDUCE_BUCKET_DEFAULT, &f), 0);
  ck_assert_int_eq(ds_bucket_add(&b, 604e6, DS_REDUCE_BUCKET_DEFAULT, &f), 1);
  ck_assert(f.elems == 12288 && f.k == 1 && b.elems == 604e6 && b.k == 1);
  ck_assert_int_eq(ds_bucket_add(&b, 49152, DS_REDUCE_BUCKET_DEFAULT, &f), 1);
  ck_assert(f.elems == 604e6 && b.k == 1);
  ck_assert_int_eq(ds_bucket_add(&b, 12288, DS_REDUCE_BUCKET_DEFAULT, &f), 0);
  ck_assert(b.elems == 49152 + 12288 && b.k == 2);
}
END_TEST

START_TEST(test_deepspeed_work)
{
  /* an allgather of n = 6,144 over d = 1,536 (4 each), 2-byte elements: d views, 2 + d kernels,
   * bytes: torch.zeros 2n, the own partition 2 x 2 x 4, PyTorch's copies 2 x 2n */
  ds_work g = ds_gather_work(6144, 1536, 2, DS_PY_VIEW_S);
  ck_assert_double_eq(g.cpu_s, 1536 * DS_PY_VIEW_S);
  ck_assert_double_eq(g.kernels, 1538);
  ck_assert_double_eq(g.hbm_bytes, 2 * 6144 + 16 + 4 * 6144);
  /* a reduce-scatter: div_ (2 x 2n), d views, 1 + d kernels, the copies in 2 x 2n */
  ds_work s = ds_scatter_work(6144, 1536, 2, DS_PY_VIEW_S);
  ck_assert(s.cpu_s == 1536 * DS_PY_VIEW_S && s.kernels == 1537 && s.hbm_bytes == 8 * 6144);
  /* the persistent gather of two tensors of 12,288 on 1,536 ranks (8 each, every rank holds
   * entries): their own views and loops 2 (1 + 3 x 1536) views; d + 2 (1 + 1536) kernels */
  const double n[2] = {12288, 12288};
  ds_work p = ds_persist_work(n, 2, 1536, 2, DS_PY_VIEW_S);
  ck_assert_double_eq_tol(p.cpu_s, 2 * (1 + 3 * 1536) * DS_PY_VIEW_S, 1e-15);
  ck_assert_double_eq(p.kernels, 1536 + 2 * 1537);
  /* bytes: each tensor its own partition and d copies of 8 (read and written), the flat copies 2 x 2 x d x 16 */
  ck_assert_double_eq(p.hbm_bytes, 2 * 2 * (2 * 8 + 2 * 1536 * 8) + 2 * 2 * 1536 * 16);
  /* an allreduce bucket of 3 gradients: 2 x 3 views, 2 + 6 kernels */
  ds_work a = ds_allreduce_work(1e6, 3, 1536, 2, DS_PY_VIEW_S);
  ck_assert(a.kernels == 8 && fabs(a.cpu_s - 6 * DS_PY_VIEW_S) < 1e-15);
}
END_TEST

static Suite *deepspeed_suite(void)
{
  Suite *s = suite_create("deepspeed");
  TCase *tc = tcase_create("tensors");
  tcase_add_test(tc, test_deepspeed_tensors);
  tcase_add_test(tc, test_deepspeed_buckets);
  suite_add_tcase(s, tc);
  tc = tcase_create("work");
  tcase_add_test(tc, test_deepspeed_work);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(deepspeed_suite)

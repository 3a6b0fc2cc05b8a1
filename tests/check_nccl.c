/* check_nccl.c - models/nccl's tuning model of NCCL 2.8.4 against its formulas worked by hand
 * from src/graph/tuning.cc (v2.8.4-1): ring and tree latencies, the protocol NCCL picks, what
 * it adds to the links' bytes. */
#include <check.h>
#include <math.h>

#include "check_util.h"
#include "models/nccl.h"

/* TOL_S: the latencies are sums of tuning.cc's microsecond figures, exact in binary to a few
 * ulps; 1e-9 s is far below their last printed digit. */
#define TOL_S 1e-9

/* Selene as PTD-P's Table 2 runs ZeRO-3: 1,536 GPUs on 192 DGX A100, 16 channels (gpu_comm_sms),
 * 192 GB/s of bus bandwidth (8 NICs at NCCL's 24 GB/s). */
static const nccl_ring big = {1536, 192, 16, 192e9};

START_TEST(test_nccl_ring_latency)
{
  /* allgather: 1535 steps, 191 of them between nodes. LL128: 10 + 1344 x 1.9 + 191 x 4.0 us;
   * Simple: 8.4 + 1344 x 3.4 + 191 x 9.6 us; LL: 3.6 + 1344 x 0.47 x 1.8 + 191 x 2.7 us */
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLGATHER, NCCL_RING, NCCL_LL128, 1e9), 3327.6e-6, TOL_S);
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLGATHER, NCCL_RING, NCCL_SIMPLE, 1e9), 6411.6e-6, TOL_S);
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLGATHER, NCCL_RING, NCCL_LL, 1e9), 1656.324e-6, TOL_S);
  /* reduce-scatter: the same steps */
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_REDUCE_SCATTER, NCCL_RING, NCCL_SIMPLE, 1e9), 6411.6e-6, TOL_S);
  /* allreduce ring Simple from 1536/16 x 64 KiB: (8.4 + 2688 x 3.4 + 382 x 9.6) x 1.9 us */
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLREDUCE, NCCL_RING, NCCL_SIMPLE, 1e9), 24348.12e-6, TOL_S);
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLREDUCE, NCCL_RING, NCCL_SIMPLE, 1e3), 12814.8e-6, TOL_S);
  /* one node of 8: 8.4 + 7 x 3.4 us */
  nccl_ring node = {8, 1, 16, 230e9};
  ck_assert_double_eq_tol(nccl_latency(&node, NCCL_ALLGATHER, NCCL_RING, NCCL_SIMPLE, 1e9), 32.2e-6, TOL_S);
  nccl_ring one = {1, 1, 16, 230e9};
  ck_assert(nccl_latency(&one, NCCL_ALLGATHER, NCCL_RING, NCCL_SIMPLE, 1e9) == 0);
}
END_TEST

START_TEST(test_nccl_tree)
{
  /* allreduce tree Simple: 0 + 2 ((8 - 1) x 28 + log2(192) = 7 x 28) us; LL128: 4.4 + 2 (7 x 1.25 + 7 x 8.5) */
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLREDUCE, NCCL_TREE, NCCL_SIMPLE, 1e9), 784e-6, TOL_S);
  ck_assert_double_eq_tol(nccl_latency(&big, NCCL_ALLREDUCE, NCCL_TREE, NCCL_LL128, 1e9), 140.9e-6, TOL_S);
  ck_assert(nccl_latency(&big, NCCL_ALLGATHER, NCCL_TREE, NCCL_SIMPLE, 1e9) < 0); /* no tree but for allreduce */
  ck_assert(nccl_time(&big, NCCL_ALLGATHER, NCCL_TREE, NCCL_SIMPLE, 1e9) < 0);
  /* a 1 GB allreduce: the tree (Simple: 784 us + 1e9 / (0.5 x min(0.92 x 192, 16 x 16) GB/s)) beats
   * the ring (its latency alone is 24 ms) */
  nccl_algo a;
  nccl_proto p;
  nccl_pick(&big, NCCL_ALLREDUCE, 1e9, &a, &p);
  ck_assert_int_eq(a, NCCL_TREE);
  ck_assert_double_eq_tol(nccl_time(&big, NCCL_ALLREDUCE, NCCL_TREE, NCCL_SIMPLE, 1e9), 784e-6 + 1e9 / (0.5 * 176.64e9),
                          TOL_S);
}
END_TEST

START_TEST(test_nccl_pick)
{
  /* a 906 MB allgather (174.6B's QKV weight in fp16): LL128, 3.3276 ms + 906e6 x 1535/1536 /
   * (0.92 x 192 GB/s), against Simple's 6.4116 ms + 906e6 x 1535/1536 / 192 GB/s */
  nccl_algo a;
  nccl_proto p;
  double b = 906e6, moved = b * 1535.0 / 1536.0;
  nccl_pick(&big, NCCL_ALLGATHER, b, &a, &p);
  ck_assert(a == NCCL_RING && p == NCCL_LL128);
  ck_assert_double_eq_tol(nccl_time(&big, NCCL_ALLGATHER, NCCL_RING, NCCL_LL128, b), 3327.6e-6 + moved / 176.64e9,
                          TOL_S);
  /* what it adds to the links' Simple-ring time */
  ck_assert_double_eq_tol(nccl_extra(&big, NCCL_ALLGATHER, b), 3327.6e-6 + moved / 176.64e9 - moved / 192e9, TOL_S);
  /* a large enough message goes back to Simple: its latency matters less than LL128's 0.92 */
  nccl_pick(&big, NCCL_ALLGATHER, 100e9, &a, &p);
  ck_assert(a == NCCL_RING && p == NCCL_SIMPLE);
  /* small messages: LL, whose bandwidth is at most 19 GB/s on more than two AMD nodes */
  nccl_pick(&big, NCCL_ALLGATHER, 1e5, &a, &p);
  ck_assert(a == NCCL_RING && p == NCCL_LL);
  ck_assert_double_eq_tol(nccl_time(&big, NCCL_ALLGATHER, NCCL_RING, NCCL_LL, 1e5),
                          1656.324e-6 + 1e5 * 1535.0 / 1536.0 / 19e9, TOL_S);
  nccl_ring one = {1, 1, 16, 230e9};
  ck_assert(nccl_extra(&one, NCCL_ALLGATHER, 1e9) == 0);
}
END_TEST

static Suite *nccl_suite(void)
{
  Suite *s = suite_create("nccl");
  TCase *tc = tcase_create("latency");
  tcase_add_test(tc, test_nccl_ring_latency);
  tcase_add_test(tc, test_nccl_tree);
  suite_add_tcase(s, tc);
  tc = tcase_create("pick");
  tcase_add_test(tc, test_nccl_pick);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(nccl_suite)

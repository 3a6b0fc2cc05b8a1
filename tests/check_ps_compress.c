/* check_ps_compress.c - Downpour's compressed pushes without a simulation: a top-k push
 * carries exactly the top k of each slice's residual-corrected gradient over two pushes
 * (worked by hand, and by a selection written here), the shard's update with the decoded
 * gradient equals the dense update of it (SGD and Adagrad, written out here), the wire bytes
 * against each method's formula, the encoding's flops, timing-only pushes, and what is
 * refused. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/ps_compress.h"

#include "check_util.h"
#include "topk_ref.h"

/* Every gradient, residual, learning rate and parameter below is a dyadic fraction, and the
 * SGD updates' products and differences stay dyadic: compared exactly. */
/* FLOPS_TOL: log2(3) is rounded once in the code and once in the constant below, a few ulps
 * of numbers near 26 (2^-52 x 32 = 7e-15 each). */
#define FLOPS_TOL 1e-13
/* SEED: any master seed; top-k draws nothing. */
#define SEED 1

/* Ten parameters over two shards (ps_layout_whole: link 0 holds [0, 5), link 1 [5, 10)),
 * top-k of 40%: k = ceil(0.4 x 5) = 2 a slice. */
static const compress_params topk40 = {COMPRESS_TOPK, 0.4, 0, 0, 15, 1};

/* The k entries of largest |v| (ties to the lower index), in increasing index order, by
 * taking the largest remaining one k times: a selection independent of compress.c's. */
/* v[0..n)'s top k (topk_ref.h) as ascending indices into idx. */
static void ref_topk(const double *v, size_t n, size_t k, size_t *idx)
{
  unsigned char mark[16];
  ck_assert_uint_le(n, sizeof mark);
  topk_ref(v, n, k, mark);
  for (size_t i = 0, j = 0; i < n; i++)
    if (mark[i])
      idx[j++] = i;
}

/* Asserts that m carries exactly v's top k (ref_topk) and that v keeps the rest: the
 * error-feedback residual the test tracks, the sent entries cleared. */
static void assert_topk_of(const ps_push_msg *m, double *v, size_t n, size_t k)
{
  size_t idx[8];
  ref_topk(v, n, k, idx);
  ck_assert_int_eq(m->z.method, COMPRESS_TOPK);
  ck_assert_uint_eq(m->z.k, k);
  for (size_t j = 0; j < k; j++) {
    ck_assert_uint_eq(m->z.idx[j], idx[j]);
    ck_assert(m->z.val[j] == v[idx[j]]);
    v[idx[j]] = 0;
  }
}

START_TEST(test_ps_compress_topk_two_pushes)
{
  ps_layout *lay = ps_layout_whole(10, 10, 2);
  ps_compress *c = ps_compress_create(&topk40, lay, 1, SEED, 0);
  ck_assert_ptr_nonnull(c);
  const double g1[10] = {0.5, -3, 1, 3, -0.25, 2, -2, 0.125, 4, -1};
  const double g2[10] = {1, 0.5, -0.5, 0.25, 3, 0.5, 1, -1, 0.5, 0.25};
  double v[10];
  memcpy(v, g1, sizeof v); /* residual 0: v = g1 */
  ps_push_msg *m0 = ps_compress_push(c, 0, 3, 7, g1, 0), *m1 = ps_compress_push(c, 1, 3, 7, g1, 0);
  /* by hand: slice 0 sends -3 and 3 (entries 1, 3); slice 1 sends 4 and, of 2 and -2, the lower index's 2 */
  ck_assert(m0->z.idx[0] == 1 && m0->z.idx[1] == 3 && m0->z.val[0] == -3 && m0->z.val[1] == 3);
  ck_assert(m1->z.idx[0] == 0 && m1->z.idx[1] == 3 && m1->z.val[0] == 2 && m1->z.val[1] == 4);
  ck_assert(m0->client == 3 && m0->version == 7 && m0->n == 5 && m0->step == 0);
  assert_topk_of(m0, v, 5, 2);
  assert_topk_of(m1, v + 5, 5, 2);
  msg_free(&m0->hdr);
  msg_free(&m1->hdr);
  for (size_t i = 0; i < 10; i++)
    v[i] += g2[i]; /* the residual-corrected second gradient */
  m0 = ps_compress_push(c, 0, 3, 8, g2, 1);
  m1 = ps_compress_push(c, 1, 3, 8, g2, 1);
  /* by hand: v = 1.5 0.5 0.5 0.25 2.75 | 0.5 -1 -0.875 0.5 -0.75 */
  ck_assert(m0->z.idx[0] == 0 && m0->z.idx[1] == 4 && m0->z.val[0] == 1.5 && m0->z.val[1] == 2.75);
  ck_assert(m1->z.idx[0] == 1 && m1->z.idx[1] == 2 && m1->z.val[0] == -1 && m1->z.val[1] == -0.875);
  assert_topk_of(m0, v, 5, 2);
  assert_topk_of(m1, v + 5, 5, 2);
  msg_free(&m0->hdr);
  msg_free(&m1->hdr);
  ps_compress_free(c);
  ps_layout_free(lay);
}
END_TEST

/* The shard's side: the decoded gradient is the message's entries and zeros elsewhere, and
 * ps_rule_apply with it is the dense update of that gradient, SGD and Adagrad written out. */
START_TEST(test_ps_compress_shard_update)
{
  ps_layout *lay = ps_layout_whole(10, 10, 2);
  ps_compress *c = ps_compress_create(&topk40, lay, 1, SEED, 0);
  const double g[10] = {0.5, -3, 1, 3, -0.25, 2, -2, 0.125, 4, -1};
  ps_push_msg *m = ps_compress_push(c, 1, 0, 0, g, 0);
  double d[5], want[5] = {2, 0, 0, 4, 0};
  ps_compress_decode(m, d);
  for (size_t i = 0; i < 5; i++)
    ck_assert(d[i] == want[i]);
  const size_t rb[] = {5}, re[] = {10}; /* shard 1's slice, its client's one range */
  double w[5] = {1, 1, 1, 1, 1}, acc[5] = {0, 0, 0, 0, 0}, wa[5] = {1, 1, 1, 1, 1};
  ps_rule_apply((ps_rule){0.5, 0, 0}, w, NULL, 5, rb, re, 1, d);
  for (size_t i = 0; i < 5; i++)
    ck_assert(w[i] == 1 - 0.5 * want[i]); /* w -= lr g */
  ps_rule_apply((ps_rule){0, 1, 0.25}, wa, acc, 5, rb, re, 1, d);
  for (size_t i = 0; i < 5; i++) { /* acc += g^2; w -= gamma / sqrt(acc) g where acc > 0 */
    double a = want[i] * want[i];
    ck_assert(acc[i] == a);
    ck_assert(wa[i] == (a > 0 ? 1 - 0.25 / sqrt(a) * want[i] : 1));
  }
  msg_free(&m->hdr);
  ps_compress_free(c);
  ps_layout_free(lay);
}
END_TEST

/* Each method's bytes for a 1,000-element slice of 4-byte values, by hand from its formula:
 * top-k 1% 10 x (4 + 4); 1-bit ceil(1000 / 8) + 2 x 4; QSGD s = 15: 1 + 4 bits an entry,
 * ceil(5000 / 8) + 4, s = 1: 2 bits, 250 + 4; dense 4,000. */
START_TEST(test_ps_compress_bytes)
{
  compress_params p = {COMPRESS_TOPK, 0.01, 0, 0, 15, 1};
  ck_assert(ps_compress_bytes(&p, 1000, 0, 4) == 80);
  ck_assert(ps_compress_bytes(&p, 0, 0, 4) == 0);
  p.method = COMPRESS_ONEBIT;
  ck_assert(ps_compress_bytes(&p, 1000, 0, 4) == 133);
  p.method = COMPRESS_QSGD;
  ck_assert(ps_compress_bytes(&p, 1000, 0, 4) == 629);
  p.levels = 1;
  ck_assert(ps_compress_bytes(&p, 1000, 0, 4) == 254);
  p.method = COMPRESS_NONE;
  ck_assert(ps_compress_bytes(&p, 1000, 0, 4) == 4000);
  /* DGC's warm-up: 25% at step 0 of 8, so 250 entries; 1% from step 8 */
  compress_params w = {COMPRESS_TOPK, 0.01, 0, 8, 15, 1};
  ck_assert(ps_compress_bytes(&w, 1000, 0, 4) == 2000);
  ck_assert(ps_compress_bytes(&w, 1000, 8, 4) == 80);
}
END_TEST

/* Top-k's encoding counts n (1 + log2(k + 1)) a slice: two slices of 5 with k = 2. */
START_TEST(test_ps_compress_flops)
{
  ps_layout *lay = ps_layout_whole(10, 10, 2);
  ps_compress *c = ps_compress_create(&topk40, lay, 0, SEED, 0);
  ck_assert_double_eq_tol(ps_compress_encode_flops(c, 0), 10 * (1 + 1.584962500721156), FLOPS_TOL);
  ck_assert(ps_compress_decode_flops(&topk40, 5, 0) == 2); /* k adds */
  ps_compress_free(c);
  ps_layout_free(lay);
}
END_TEST

/* Without numerics a push carries its method and no values (its size travels alone). */
START_TEST(test_ps_compress_timing_only)
{
  ps_layout *lay = ps_layout_whole(0, 1000, 2);
  compress_params p = {COMPRESS_QSGD, 0.01, 0, 0, 15, 1};
  ps_compress *c = ps_compress_create(&p, lay, 0, SEED, 2);
  ps_push_msg *m = ps_compress_push(c, 1, 2, 0, NULL, 4);
  ck_assert(m->n == 0 && m->z.method == COMPRESS_QSGD && m->step == 4);
  msg_free(&m->hdr);
  ps_compress_free(c);
  ps_layout_free(lay);
}
END_TEST

/* No state for dense pushes, for PowerSGD (no allreduce to sum its factors in) or for a
 * ratio out of range. */
START_TEST(test_ps_compress_refused)
{
  ps_layout *lay = ps_layout_whole(10, 10, 2);
  compress_params p = {COMPRESS_NONE, 0.01, 0, 0, 15, 1};
  ck_assert_ptr_null(ps_compress_create(&p, lay, 1, SEED, 0));
  p.method = COMPRESS_POWERSGD;
  ck_assert_ptr_null(ps_compress_create(&p, lay, 1, SEED, 0));
  p.method = COMPRESS_TOPK;
  p.ratio = 0;
  ck_assert_ptr_null(ps_compress_create(&p, lay, 1, SEED, 0));
  ps_compress_free(NULL);
  ps_layout_free(lay);
}
END_TEST

Suite *ps_compress_suite(void)
{
  Suite *s = suite_create("ps_compress");
  ADD_TCASE(s, "topk", test_ps_compress_topk_two_pushes, test_ps_compress_shard_update);
  ADD_TCASE(s, "sizes", test_ps_compress_bytes, test_ps_compress_flops, test_ps_compress_timing_only);
  ADD_TCASE(s, "limits", test_ps_compress_refused);
  return s;
}

CHECK_MAIN(ps_compress_suite)
